/**
 * Errors whose message is written for the user (bad input, an appliance's refusal, a changed
 * certificate ...): IPC answers carry their message. Any other error is logged and the renderer
 * receives a generic message, never a stack or an internal detail.
 */
export class UserFacingError extends Error {
  override name = 'UserFacingError';
}
