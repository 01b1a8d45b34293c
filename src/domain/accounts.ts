/** Rules of user accounts shared by the Worker and the admin scripts (scripts/lib/admin.mjs). */

/** Emails are stored and compared in this form, so a user can log in with any casing. */
export const normalizeEmail = (email: string) => email.trim().toLowerCase();

/** A new password's length, in characters. */
export const MIN_PASSWORD_LENGTH = 12;
export const MAX_PASSWORD_LENGTH = 256;
