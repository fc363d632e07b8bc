/**
 * Turns AJV errors into the human, per-field messages clients show ("The email field is required.").
 */
import type { FieldErrors } from './envelopes.js';

interface AjvError {
  keyword: string;
  instancePath: string;
  params: Record<string, unknown>;
  message?: string;
  parentSchema?: Record<string, unknown>;
}

function fieldOf(error: AjvError): string {
  const path = error.instancePath.replace(/^\//, '').split('/').filter(Boolean);
  if (error.keyword === 'required') path.push(String(error.params.missingProperty));
  if (error.keyword === 'additionalProperties') path.push(String(error.params.additionalProperty));
  return path.join('.') || 'body';
}

function messageOf(error: AjvError, field: string): string {
  // `errorMessage` on a schema: one text for every failure of it, or a text per keyword.
  const custom = error.parentSchema?.errorMessage;
  if (typeof custom === 'string') return custom;
  if (custom !== null && typeof custom === 'object') {
    const text = (custom as Record<string, unknown>)[error.keyword];
    if (typeof text === 'string') return text;
  }
  const label = field.replace(/_/g, ' ');
  const p = error.params;
  switch (error.keyword) {
    case 'required':
      return `The ${label} field is required.`;
    case 'type': {
      const type = String(p.type);
      if (type === 'integer') return `The ${label} field must be an integer.`;
      if (type === 'number') return `The ${label} field must be a number.`;
      if (type === 'boolean') return `The ${label} field must be true or false.`;
      if (type === 'array') return `The ${label} field must be an array.`;
      if (type === 'object') return `The ${label} field must be an object.`;
      return `The ${label} field must be a string.`;
    }
    case 'minLength':
      return Number(p.limit) <= 1
        ? `The ${label} field is required.`
        : `The ${label} field must be at least ${String(p.limit)} characters.`;
    case 'maxLength':
      return `The ${label} field must not be greater than ${String(p.limit)} characters.`;
    case 'minimum':
    case 'exclusiveMinimum':
      return `The ${label} field must be at least ${String(p.limit)}.`;
    case 'maximum':
    case 'exclusiveMaximum':
      return `The ${label} field must not be greater than ${String(p.limit)}.`;
    case 'minItems':
      return `The ${label} field must have at least ${String(p.limit)} items.`;
    case 'maxItems':
      return `The ${label} field must not have more than ${String(p.limit)} items.`;
    case 'format':
      return p.format === 'email'
        ? `The ${label} field must be a valid email address.`
        : `The ${label} field format is invalid.`;
    case 'pattern':
      return `The ${label} field format is invalid.`;
    case 'enum':
    case 'const':
    case 'anyOf':
    case 'oneOf':
      return `The selected ${label} is invalid.`;
    case 'additionalProperties':
      return `The ${label} field is not allowed.`;
    default:
      return `The ${label} field is invalid.`;
  }
}

export function fieldErrorsFrom(errors: readonly AjvError[]): {
  fields: FieldErrors;
  first: string;
} {
  const fields: FieldErrors = {};
  let first = '';
  for (const error of errors) {
    const field = fieldOf(error);
    const message = messageOf(error, field);
    // A union reports one error per branch: keep each distinct message once.
    const list = (fields[field] ??= []);
    if (!list.includes(message)) list.push(message);
    first ||= message;
  }
  return { fields, first: first || 'The given data was invalid.' };
}
