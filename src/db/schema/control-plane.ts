// The control database of a deployment (binding `DB`): who may call, with which credentials and payment methods,
// and where each owner's data lives. Read on every request, mostly through the isolate caches (lib/isolate-cache.ts).
// Its migrations: migrations/control (drizzle.control.config.ts).
export * from './users.ts';
export * from './sessions.ts';
export * from './api-keys.ts';
export * from './payment-methods.ts';
export * from './owner-placements.ts';
