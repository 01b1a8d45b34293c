// `npm run create-admin -- --env test|live [--remote] --email admin@merchant.example [--name "Ops"]`
// Creates an admin user in an environment's D1 database; the first admin of a deployed environment is
// made this way (there is no default password anywhere but the local bootstrap admin of `npm start`).
// The password comes from ADMIN_PASSWORD or is asked on the terminal; 12 to 256 characters.
// Without --remote it writes to the local database of `wrangler dev` (.wrangler/state).
// An existing user with that email is left untouched.
import { createInterface } from 'node:readline/promises';
import { parseArgs } from 'node:util';

const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 18)) {
  console.error(
    `create-admin needs Node 22.18+ (found ${process.version}); run it as \`npm run create-admin -- ...\`.`,
  );
  process.exit(1);
}
const { ensureAdmin, isPlausibleEmail, MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH } = await import('./lib/admin.mjs');

const USAGE =
  'usage: npm run create-admin -- --env test|live [--remote] --email <email> [--name <name>]\n' +
  '       the password is read from ADMIN_PASSWORD, or asked for on the terminal';

function fail(message) {
  console.error(`create-admin: ${message}`);
  process.exit(1);
}

let values;
try {
  ({ values } = parseArgs({
    options: {
      env: { type: 'string' },
      remote: { type: 'boolean', default: false },
      email: { type: 'string' },
      name: { type: 'string', default: 'Administrator' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  }));
} catch (error) {
  fail(`${error.message}\n${USAGE}`);
}
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
if (values.env !== 'test' && values.env !== 'live') fail(`--env must be test or live\n${USAGE}`);
if (!values.email || !isPlausibleEmail(values.email.trim())) fail(`--email must be an email address\n${USAGE}`);
const name = values.name.trim();
if (name.length < 1 || name.length > 200) fail('--name must be 1 to 200 characters');

async function readPassword() {
  if (process.env.ADMIN_PASSWORD !== undefined) return process.env.ADMIN_PASSWORD;
  if (!process.stdin.isTTY) {
    // Piped: the first line of standard input.
    const rl = createInterface({ input: process.stdin, terminal: false });
    for await (const line of rl) {
      rl.close();
      return line;
    }
    return '';
  }
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return await rl.question(
      `Password for ${values.email} (${MIN_PASSWORD_LENGTH} to ${MAX_PASSWORD_LENGTH} characters): `,
    );
  } finally {
    rl.close();
  }
}

const password = await readPassword();
if (password.length < MIN_PASSWORD_LENGTH) fail(`the password must have at least ${MIN_PASSWORD_LENGTH} characters`);
if (password.length > MAX_PASSWORD_LENGTH) fail(`the password must have at most ${MAX_PASSWORD_LENGTH} characters`);

const where = values.remote ? `the deployed ${values.env} database` : `the local ${values.env} database`;
try {
  const admin = await ensureAdmin({
    env: values.env,
    target: [values.remote ? '--remote' : '--local'],
    email: values.email,
    name,
    password,
  });
  if (admin.created === false) {
    fail(`a user with ${admin.email} already exists in ${where}; nothing was changed.`);
  } else {
    console.log(
      `Admin ${admin.email} ${admin.created ? 'created' : 'ensured'} in ${where}. Log in with POST /v1/auth/login.`,
    );
  }
} catch (error) {
  fail(error.message);
}
