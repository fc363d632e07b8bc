import { describe, expect, it } from 'vitest';
import { fieldErrorsFrom } from './validation.js';

describe('fieldErrorsFrom and errorMessage', () => {
  it('uses a schema-wide errorMessage for every keyword', () => {
    const { first } = fieldErrorsFrom([
      {
        keyword: 'minLength',
        instancePath: '/name',
        params: { limit: 3 },
        parentSchema: { errorMessage: 'Invalid parameter' },
      },
    ]);
    expect(first).toBe('Invalid parameter');
  });

  it('uses a per-keyword errorMessage for its keyword only', () => {
    const schema = { errorMessage: { required: 'Invalid parameter' } };
    const missing = fieldErrorsFrom([
      {
        keyword: 'required',
        instancePath: '',
        params: { missingProperty: 'name' },
        parentSchema: schema,
      },
    ]);
    expect(missing.first).toBe('Invalid parameter');
    const wrongType = fieldErrorsFrom([
      { keyword: 'type', instancePath: '', params: { type: 'object' }, parentSchema: schema },
    ]);
    expect(wrongType.first).toBe('The body field must be an object.');
  });
});
