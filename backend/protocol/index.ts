// The one typed protocol shared by the backend, the extension and the webviews.
// Imports nothing but its own files, so every side can depend on it.
export * from './verify';
export * from './ast';
export * from './prove';
export * from './lsp';
export * from './training';
export * from './evaluation';
export * from './schema';
export * from './routes';
export * from './sse';
export * from './errors';
export * from './agentTools';
export * from './jsonSchema';
