/** Personal access token rules of spec part 1 (checked before the request, and again by the API). */
export const SCOPES = [
  'mcp:devices',
  'mcp:alerts',
  'mcp:logs',
  'mcp:reports',
  'mcp:system',
  'mcp:tools',
  'mcp:vne',
  'mcp:capture',
] as const;

export function tokenNameProblem(name: string): string | null {
  if (name.length < 1 || name.length > 100) return 'A name has 1 to 100 characters.';
  if (name.startsWith('spa:') || name.startsWith('MCP Client: '))
    return 'Names starting with "spa:" or "MCP Client: " are reserved.';
  return null;
}

export function expiryProblem(days: number): string | null {
  return Number.isInteger(days) && days >= 1 && days <= 3650 ? null : 'Expiry is 1 to 3650 days.';
}
