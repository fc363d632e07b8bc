export {
  findUserById,
  findUsersByLogin,
  holdsSuperAdmin,
  insertUser,
  listPermissions,
  nameHolder,
  permissionSlugsOf,
  permissionsBySlug,
  replacePermissions,
  replaceTags,
  tagsOf,
  consumeTotpStep,
  updateUser,
  userExists,
  SUPER_ADMIN_USER_ID,
  type UserRow,
} from './users.repository.js';
export { usersRoutes } from './users.routes.js';
export { seedSuperAdmin } from './users.seed.js';
export { identityKey, normalizeUsername } from './username.rules.js';
