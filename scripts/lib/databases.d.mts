export function databaseBindings(env: string, configPath?: string): { control: 'DB'; shards: string[] };
