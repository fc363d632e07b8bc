/**
 * Alert delivery, as the alerting feature uses it: the queue (DeliveryEngine implements
 * DeliveryQueue), template rendering, the outlet URL check and the outlet policy, the mail relay.
 * See docs/features/alert-delivery.md.
 */
export type {
  DeliveryAttempt,
  DeliveryQueue,
  DeliveryRecord,
  DeliveryStatus,
  Notification,
  OutletTarget,
  OutletType,
} from './delivery.schema.js';
export { DeliveryEngine, type DeliveryEngineOptions } from './delivery.engine.js';
export { renderTemplate, escapeHtml } from './template.rules.js';
export { checkOutletUrl, type OutletPolicy, type OutletUrlCheck } from './outlet-url.rules.js';
export { outletPolicy } from '../../../platform/net/outbound.js';
export { validateHeaders, validAuthorization } from './outlet-payload.rules.js';
export { recipientsOf, WEBHOOK_METHODS } from './outlet-request.rules.js';
export { attemptsOf, deliveriesOfOccurrence, findDelivery } from './delivery.repository.js';
export { type SmtpRelay } from './mail.service.js';
export { createAlertDelivery, type AlertDelivery } from './delivery.service.js';
export { DELIVERY_RETENTION_DAYS, registerDeliveryRetention } from './delivery.writes.js';
