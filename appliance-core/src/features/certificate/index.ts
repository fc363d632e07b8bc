/**
 * The HTTPS certificate (spec part 3, Appliance settings: getCertificate, extractCertificate;
 * designed: saveCertificate, rollbackCertificate). The stored pair and the boot-time loader are
 * platform/security/certificate.ts (TlsStore, loadOrCreateTls).
 */
export { certificateRoutes } from './certificate.routes.js';
