/** The header a client reads a D1 bookmark from and sends it back in (docs/read-replication.md). */
export const READ_BOOKMARK_HEADER = 'X-Read-Bookmark';
