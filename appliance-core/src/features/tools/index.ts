export { toolsRoutes } from './tools.routes.js';
export {
  RETENTION_JOB_ID,
  ToolsEngine,
  ToolsService,
  type ToolsOverrides,
} from './tools.service.js';
export { ToolRunSlots } from './tool-runs.service.js';
