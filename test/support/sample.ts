/**
 * Test support: the fixed values of the sample data (data/tenants.json, data/sample/clients.json) that
 * several test suites rely on.
 */
export const TENANT_A = "3f7c1a52-8d1e-4b7a-9c3e-5a2b6d8e9f01";
export const TENANT_B = "7b2e9d14-6c3a-4f5e-8a1b-2c4d6e8f0a13";
export const WEB_CLIENT = "portier-demo-web";
export const REDIRECT_URI = "http://127.0.0.1:8400/callback";
export const MACHINE_CLIENT = "portier-demo-machine";
export const MACHINE_SECRET = "portier-demo-secret";
