import { defineConfig } from 'vitest/config';

// The Node-side test project (`npm run test:node`): plain vitest in Node against a real local server that
// test-node/global-setup.ts starts like `npm start` does (fresh temporary state, free port). It drives
// /docs in Debian's Chromium, lints /openapi.json, checks the generated client and runs the example flow.
export default defineConfig({
  test: {
    name: 'node',
    environment: 'node',
    include: ['test-node/**/*.test.ts'],
    globalSetup: ['./test-node/global-setup.ts'],
    // One server for the run; the files share it, so they run one at a time.
    fileParallelism: false,
    testTimeout: 120_000,
    hookTimeout: 180_000,
    teardownTimeout: 30_000,
  },
});
