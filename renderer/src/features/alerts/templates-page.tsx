/**
 * Alert classes and email templates (spec part 3, Alerting; permission `alerts`): the classes with
 * their `{$variable}` variables and default template, the templates with edit and restore (to the
 * canonical default, confirmed; 422 when the class has none). Substitution is logic-less: only
 * `{$variable}` is replaced, nothing else in a template is evaluated.
 */
import {
  Alert,
  Button,
  Code,
  Group,
  Modal,
  Paper,
  Select,
  SimpleGrid,
  Stack,
  Table,
  Text,
  Textarea,
  TextInput,
  Title,
} from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';

import { EmptyState, ErrorNotice, errorText, RowsSkeleton } from '../../components/ui/feedback.js';
import { PageHeader } from '../../components/ui/page-header.js';
import { ApiError } from '../../lib/api-error.js';
import { formErrors } from './alert-model.js';
import {
  alertKeys,
  classesQuery,
  restoreTemplate,
  saveTemplate,
  templateClassesQuery,
  templatesQuery,
  type EmailTemplate,
  type TemplateClass,
} from './alerts-api.js';
import { AlertsNav, Gate, toastOk, useConfirm } from './alerts-ui.js';

export function Variables({ variables }: { variables: { slug: string; label: string }[] }) {
  if (variables.length === 0)
    return (
      <Text size="xs" c="dimmed">
        No variables
      </Text>
    );
  return (
    <Group gap={4} data-testid="variables">
      {variables.map((v) => (
        <Code key={v.slug} title={v.label}>{`{$${v.slug}}`}</Code>
      ))}
    </Group>
  );
}

export function TemplateEditor({
  template,
  classes,
  onClose,
}: {
  template: EmailTemplate;
  classes: TemplateClass[];
  onClose: () => void;
}) {
  const queryClient = useQueryClient();
  const [d, setD] = useState({
    label: template.label,
    description: template.description ?? '',
    class: template.class,
    email_template: template.email_template,
    alt_template: template.alt_template,
  });
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [refusal, setRefusal] = useState<string | null>(null);
  const cls = classes.find((c) => c.name === d.class);
  const save = useMutation({
    mutationFn: () =>
      saveTemplate(template.id, {
        label: d.label.trim(),
        description: d.description === '' ? null : d.description,
        class: d.class,
        email_template: d.email_template,
        alt_template: d.alt_template,
      }),
    onSuccess: () => {
      toastOk('Template saved.');
      void queryClient.invalidateQueries({ queryKey: alertKeys.all });
      onClose();
    },
    onError: (err) => {
      setErrors(err instanceof ApiError ? formErrors(err.fields) : {});
      setRefusal(errorText(err));
    },
  });
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        if (d.label.trim() === '') return setErrors({ label: 'A label is required' });
        if (d.description.length > 1024)
          return setErrors({ description: 'At most 1024 characters' });
        save.mutate();
      }}
    >
      <Stack gap="sm">
        {refusal ? (
          <Alert color="red" variant="light" role="alert">
            {refusal}
          </Alert>
        ) : null}
        <Group grow align="flex-start">
          <TextInput
            label="Label"
            required
            value={d.label}
            error={errors.label}
            onChange={(e) => setD({ ...d, label: e.currentTarget.value })}
          />
          <Select
            label="Class"
            clearable
            placeholder="none"
            data={classes.map((c) => ({ value: c.name, label: c.label }))}
            value={d.class}
            onChange={(v) => setD({ ...d, class: v })}
          />
        </Group>
        <TextInput
          label="Description"
          value={d.description}
          error={errors.description}
          description={`${d.description.length} / 1024`}
          onChange={(e) => setD({ ...d, description: e.currentTarget.value })}
        />
        <div>
          <Text size="sm" fw={500}>
            Variables of the class
          </Text>
          <Variables variables={cls?.variables ?? []} />
        </div>
        <Textarea
          label="HTML body"
          description="Values from devices are HTML-escaped"
          className="console-mono"
          autosize
          minRows={5}
          maxRows={14}
          value={d.email_template}
          error={errors.email_template}
          onChange={(e) => setD({ ...d, email_template: e.currentTarget.value })}
        />
        <Textarea
          label="Text body"
          className="console-mono"
          autosize
          minRows={3}
          maxRows={10}
          value={d.alt_template}
          error={errors.alt_template}
          onChange={(e) => setD({ ...d, alt_template: e.currentTarget.value })}
        />
        <Group justify="flex-end">
          <Button variant="default" onClick={onClose}>
            Cancel
          </Button>
          <Button type="submit" loading={save.isPending}>
            Save template
          </Button>
        </Group>
      </Stack>
    </form>
  );
}

function TemplatesContent() {
  const queryClient = useQueryClient();
  const classes = useQuery(classesQuery);
  const templateClasses = useQuery(templateClassesQuery);
  const templates = useQuery(templatesQuery);
  const [editing, setEditing] = useState<EmailTemplate | null>(null);
  const confirm = useConfirm(() => {
    toastOk('Template restored to its default.');
    void queryClient.invalidateQueries({ queryKey: alertKeys.templates });
  });
  const tClasses = templateClasses.data ?? [];
  return (
    <Stack gap="sm">
      <PageHeader
        title="Classes and templates"
        subtitle="What alerts can watch, and what they say"
      />
      <AlertsNav />
      <SimpleGrid cols={{ base: 1, lg: 2 }} spacing="sm">
        <Paper withBorder p="sm">
          <Title order={2} mb={6}>
            Alert classes
          </Title>
          {classes.isError ? (
            <ErrorNotice error={classes.error} onRetry={() => void classes.refetch()} />
          ) : classes.isPending ? (
            <RowsSkeleton rows={4} />
          ) : (
            <Stack gap="sm">
              {classes.data.map((c) => (
                <div key={c.name}>
                  <Group gap={6}>
                    <Text fw={600}>{c.label}</Text>
                    <Code>{c.name}</Code>
                  </Group>
                  <Text size="sm" c="dimmed">
                    {c.description}
                  </Text>
                  <Text size="xs">
                    Default template: {c.default_email_template_label ?? 'none'}
                  </Text>
                  <Variables variables={c.variables} />
                </div>
              ))}
            </Stack>
          )}
        </Paper>
        <Paper withBorder p="sm">
          <Title order={2} mb={6}>
            Email templates
          </Title>
          {templates.isError ? (
            <ErrorNotice error={templates.error} onRetry={() => void templates.refetch()} />
          ) : templates.isPending ? (
            <RowsSkeleton rows={4} />
          ) : templates.data.length === 0 ? (
            <EmptyState title="No email templates" />
          ) : (
            <Table aria-label="Email templates">
              <Table.Tbody>
                {templates.data.map((t) => {
                  const restorable = tClasses.find((c) => c.name === t.class)?.restorable ?? false;
                  return (
                    <Table.Tr key={t.id}>
                      <Table.Td>
                        <Text>{t.label}</Text>
                        <Text size="xs" c="dimmed">
                          {t.description ?? ''}
                        </Text>
                      </Table.Td>
                      <Table.Td>{t.class ? <Code>{t.class}</Code> : null}</Table.Td>
                      <Table.Td>
                        <Group gap={4} justify="flex-end" wrap="nowrap">
                          <Button size="xs" variant="default" onClick={() => setEditing(t)}>
                            Edit
                          </Button>
                          <Button
                            size="xs"
                            variant="light"
                            color="orange"
                            disabled={!restorable}
                            title={
                              restorable ? undefined : 'Its class has no canonical default template'
                            }
                            onClick={() =>
                              confirm.ask({
                                title: 'Restore a template',
                                text: `Replace both bodies of "${t.label}" with the canonical default of ${t.class}? Your edits are lost.`,
                                confirm: 'Restore',
                                action: () => restoreTemplate(t.id),
                              })
                            }
                          >
                            Restore
                          </Button>
                        </Group>
                      </Table.Td>
                    </Table.Tr>
                  );
                })}
              </Table.Tbody>
            </Table>
          )}
        </Paper>
      </SimpleGrid>
      <Modal
        opened={editing !== null}
        onClose={() => setEditing(null)}
        title="Edit email template"
        size="xl"
      >
        {editing ? (
          <TemplateEditor template={editing} classes={tClasses} onClose={() => setEditing(null)} />
        ) : null}
      </Modal>
      {confirm.dialog}
    </Stack>
  );
}

export function Page() {
  return (
    <Gate permission="alerts" title="Classes and templates">
      <TemplatesContent />
    </Gate>
  );
}
