// Placeholder until this command lands.
export async function run(_args: string[]): Promise<number> {
  console.error('kimina: this command is not available in this build yet');
  return 2;
}
