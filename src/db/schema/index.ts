export * from './users.ts';
export * from './sessions.ts';
export * from './api-keys.ts';
export * from './payment-methods.ts';
export * from './payments.ts';
export * from './events.ts';
export * from './webhook-endpoints.ts';
