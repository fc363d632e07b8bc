/**
 * URL monitoring: URL trackers (HTTP/HTTPS checks with latency, status, pattern and certificate
 * expiry), their checks on the shared scheduler, and the URL tracker report.
 */
export { urlMonitorsRoutes } from './url.routes.js';
export { UrlMonitorEngine, type UrlEngineOptions } from './url.engine.js';
export { checkUrl, type UrlCheckResult } from './url.checker.js';
export { urlOfTracker } from './url.repository.js';
