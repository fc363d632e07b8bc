// @vitest-environment happy-dom
import { MantineProvider } from '@mantine/core';
import { cleanup, fireEvent, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { CredentialFields, safeNext, type CredentialStep } from './credential-fields.js';

afterEach(cleanup);

function renderStep(step: CredentialStep) {
  const props = {
    step,
    login: 'ada',
    password: '',
    totp: '',
    busy: false,
    onLogin: vi.fn(),
    onPassword: vi.fn(),
    onTotp: vi.fn(),
    onBack: vi.fn(),
  };
  render(
    <MantineProvider>
      <form>
        <CredentialFields {...props} />
      </form>
    </MantineProvider>,
  );
  return props;
}

describe('sign-in credential fields', () => {
  it('asks for username and password first, and reports what is typed', () => {
    const props = renderStep('password');
    fireEvent.change(screen.getByLabelText(/Password/), { target: { value: 's3cret' } });
    expect(props.onPassword).toHaveBeenCalledWith('s3cret');
    expect(screen.getByRole('button', { name: 'Sign in' })).toBeTruthy();
    expect(screen.queryByRole('button', { name: 'Back' })).toBeNull();
  });

  it('then asks for the code, with a way back', () => {
    const props = renderStep('totp');
    expect(screen.queryByLabelText(/Password/)).toBeNull();
    expect(screen.getByRole('button', { name: 'Verify' })).toBeTruthy();
    fireEvent.click(screen.getByRole('button', { name: 'Back' }));
    expect(props.onBack).toHaveBeenCalledOnce();
  });

  it('returns only to paths of this console', () => {
    expect(safeNext('/devices/1')).toBe('/devices/1');
    expect(safeNext('//evil.example/x')).toBe('/');
    expect(safeNext('https://evil.example/')).toBe('/');
    expect(safeNext(null)).toBe('/');
  });
});
