// Where evaluation results live: the backend's one database, shared with attempts and training.
import { join, resolve } from 'node:path';
import { kiminaHome } from '../app/settings';

/** KIMINA_DB, else <KIMINA_HOME>/kimina.db. */
export function evalDbPath(): string {
  return resolve(process.env.KIMINA_DB || join(kiminaHome(), 'kimina.db'));
}
