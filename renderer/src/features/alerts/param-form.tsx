/**
 * The parameter form of an alert, rendered from its class's parameter schema
 * (`GET /api/alert-classes`); a class without a usable schema (unknown classes) gets a JSON editor.
 */
import {
  Checkbox,
  JsonInput,
  NumberInput,
  Select,
  Stack,
  TextInput,
  Textarea,
} from '@mantine/core';

import type { ParamDraft, ParamField } from './alert-model.js';

export function ParamForm({
  fields,
  draft,
  errors,
  onChange,
}: {
  fields: ParamField[];
  draft: ParamDraft;
  errors: Record<string, string>;
  onChange: (draft: ParamDraft) => void;
}) {
  const set = (name: string, value: string | boolean) => onChange({ ...draft, [name]: value });
  return (
    <Stack gap="xs" data-testid="param-form">
      {fields.map((f) => {
        const common = { label: f.label, error: errors[f.name], required: f.required };
        const value = draft[f.name];
        const text = typeof value === 'string' ? value : '';
        switch (f.type) {
          case 'boolean':
            return (
              <Checkbox
                key={f.name}
                label={f.label}
                checked={value === true}
                onChange={(e) => set(f.name, e.currentTarget.checked)}
              />
            );
          case 'select':
            return (
              <Select
                key={f.name}
                {...common}
                clearable={!f.required}
                placeholder="any"
                data={(f.options ?? []).map((o) => ({ value: String(o.value), label: o.label }))}
                value={text === '' ? null : text}
                onChange={(v) => set(f.name, v ?? '')}
              />
            );
          case 'number':
            return (
              <NumberInput
                key={f.name}
                {...common}
                min={f.min}
                max={f.max}
                allowDecimal={false}
                value={text}
                onChange={(v) => set(f.name, String(v))}
              />
            );
          case 'string[]':
            return (
              <Textarea
                key={f.name}
                {...common}
                description="One a line (substring match, not a pattern)"
                autosize
                minRows={2}
                value={text}
                onChange={(e) => set(f.name, e.currentTarget.value)}
              />
            );
          case 'number[]':
            return (
              <TextInput
                key={f.name}
                {...common}
                description="Comma separated"
                value={text}
                onChange={(e) => set(f.name, e.currentTarget.value)}
              />
            );
          default:
            return (
              <TextInput
                key={f.name}
                {...common}
                value={text}
                onChange={(e) => set(f.name, e.currentTarget.value)}
              />
            );
        }
      })}
    </Stack>
  );
}

export function JsonParams({
  value,
  error,
  onChange,
}: {
  value: string;
  error?: string;
  onChange: (v: string) => void;
}) {
  return (
    <JsonInput
      label="Parameters (JSON)"
      description="This class has no parameter form: any JSON object is stored as it is"
      autosize
      minRows={4}
      formatOnBlur
      value={value}
      error={error}
      onChange={onChange}
    />
  );
}
