export * from './control-plane.ts';
export * from './data-plane.ts';
