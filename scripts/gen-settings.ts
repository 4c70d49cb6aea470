// Writes what is generated from the settings tables: package.json's contributes.configuration, the Workspace Trust
// list (capabilities.untrustedWorkspaces.restrictedConfigurations) and the engine enum, from
// backend/protocol/settingsTable.ts; and docs/settings.md's table, from backend/settings/settings.ts.
// Run: npm run gen:settings   (test/extension/settingsTable.test.ts and test/settings/settings.test.ts fail while they differ)
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { manifestProperties, restrictedConfigurations } from '../backend/protocol/settingsTable';
import { DOC, withCurrentTable } from './settings-doc';

export const MANIFEST = join(__dirname, '..', 'package.json');

interface Manifest {
  capabilities: { untrustedWorkspaces: { restrictedConfigurations: string[] } };
  contributes: { configuration: { title: string; properties: Record<string, unknown> } };
}

/** package.json's text with its generated parts replaced by the ones the table declares. */
export function withGeneratedManifest(text: string): string {
  const pkg = JSON.parse(text) as Manifest;
  pkg.capabilities.untrustedWorkspaces.restrictedConfigurations = restrictedConfigurations();
  pkg.contributes.configuration.properties = manifestProperties();
  return `${JSON.stringify(pkg, null, 2)}\n`;
}

if (require.main === module) {
  writeFileSync(MANIFEST, withGeneratedManifest(readFileSync(MANIFEST, 'utf8')));
  writeFileSync(DOC, withCurrentTable(readFileSync(DOC, 'utf8')));
  console.log(`wrote ${MANIFEST} and ${DOC}`);
}
