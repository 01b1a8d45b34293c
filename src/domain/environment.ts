/** The environment a deployment serves: its keys, tokens and data never cross to the other one. */
export type Environment = 'test' | 'live';
