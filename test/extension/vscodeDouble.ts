// TEST DOUBLE of the `vscode` module, for the extension's unit tests under node's test runner (where the real
// module exists only inside VS Code). It implements only what the tested paths of extension/ use (proofRunner,
// proposal, commands, repair, proofView, decorations, config), with the behaviour vscode.d.ts states
// (@types/vscode 1.100.0, node_modules/@types/vscode/index.d.ts; line numbers below are of that file) and the
// built-in commands' behaviour from code.visualstudio.com/api/references/commands. It is not VS Code: documents
// live in memory, URIs are not percent-encoded, nothing is drawn. The test controls (`double`) record what the
// extension showed, applied and ran. test/extension/useVscodeDouble.ts makes `import 'vscode'` load this file.
import type * as vscode from 'vscode';

/** index.d.ts 1718, 1729: Disposable.from disposes all it was given. */
export class Disposable {
  constructor(private readonly callOnDispose: () => unknown) {}
  static from(...items: { dispose(): unknown }[]): Disposable {
    return new Disposable(() => items.forEach((d) => d.dispose()));
  }
  dispose(): unknown {
    return this.callOnDispose();
  }
}

type Listener<T> = (e: T) => unknown;
/** index.d.ts 1783: `event` subscribes (returns a Disposable that unsubscribes), `fire` notifies every listener. */
export class EventEmitter<T> {
  private listeners = new Set<Listener<T>>();
  readonly event = (listener: Listener<T>, thisArgs?: unknown, disposables?: Disposable[]): Disposable => {
    const bound: Listener<T> = (e) => listener.call(thisArgs, e);
    this.listeners.add(bound);
    const d = new Disposable(() => this.listeners.delete(bound));
    disposables?.push(d);
    return d;
  };
  fire(data: T): void {
    for (const l of [...this.listeners]) l(data);
  }
  dispose(): void {
    this.listeners.clear();
  }
}

/** index.d.ts 1681: cancel() sets isCancellationRequested and fires onCancellationRequested once. */
export class CancellationTokenSource {
  private readonly cancelled = new EventEmitter<void>();
  readonly token = {
    isCancellationRequested: false,
    onCancellationRequested: this.cancelled.event,
  };
  cancel(): void {
    if (this.token.isCancellationRequested) return;
    this.token.isCancellationRequested = true;
    this.cancelled.fire();
  }
  dispose(): void {
    this.cancelled.dispose();
  }
}

/** index.d.ts 275: a zero-based line and character. */
export class Position {
  constructor(
    readonly line: number,
    readonly character: number,
  ) {}
  isBefore(other: Position): boolean {
    return this.line < other.line || (this.line === other.line && this.character < other.character);
  }
}

/** index.d.ts 414: from two positions or four numbers; start is the earlier of the two. */
export class Range {
  readonly start: Position;
  readonly end: Position;
  constructor(a: Position | number, b: Position | number, c?: number, d?: number) {
    const p = typeof a === 'number' ? new Position(a, b as number) : a;
    const q = typeof a === 'number' ? new Position(c!, d!) : (b as Position);
    [this.start, this.end] = q.isBefore(p) ? [q, p] : [p, q];
  }
}

/** index.d.ts 1445, 1507: scheme:[//authority]path[?query][#fragment]; joinPath appends path segments. */
export class Uri {
  private constructor(
    readonly scheme: string,
    readonly authority: string,
    readonly path: string,
    readonly query: string,
    readonly fragment: string,
  ) {}
  static parse(value: string): Uri {
    // RFC 3986 appendix B, as VS Code's own uri.ts splits a string
    const m = /^(([^:/?#]+?):)?(\/\/([^/?#]*))?([^?#]*)(\?([^#]*))?(#(.*))?/.exec(value)!;
    return new Uri(m[2] ?? 'file', m[4] ?? '', m[5] ?? '', m[7] ?? '', m[9] ?? '');
  }
  static file(path: string): Uri {
    return new Uri('file', '', path, '', '');
  }
  static from(c: { scheme: string; authority?: string; path?: string; query?: string; fragment?: string }): Uri {
    return new Uri(c.scheme, c.authority ?? '', c.path ?? '', c.query ?? '', c.fragment ?? '');
  }
  static joinPath(base: Uri, ...segments: string[]): Uri {
    return new Uri(base.scheme, base.authority, [base.path, ...segments].join('/').replace(/\/+/g, '/'), '', '');
  }
  get fsPath(): string {
    return this.path;
  }
  toString(): string {
    const authority = this.authority || this.scheme === 'file' ? `//${this.authority}` : '';
    return `${this.scheme}:${authority}${this.path}${this.query ? `?${this.query}` : ''}${this.fragment ? `#${this.fragment}` : ''}`;
  }
}

export class ThemeColor {
  constructor(readonly id: string) {}
}

/** index.d.ts 2818 */
export class CodeLens {
  constructor(
    public range: Range,
    public command?: { title: string; command: string; arguments?: unknown[] },
  ) {}
}

export const CodeActionKind = { QuickFix: { value: 'quickfix' } };

/** index.d.ts 3942: text replacements per resource, applied by workspace.applyEdit in the order added. */
export class WorkspaceEdit {
  readonly edits: { uri: Uri; range: Range; newText: string }[] = [];
  replace(uri: Uri, range: Range, newText: string): void {
    this.edits.push({ uri, range, newText });
  }
}

export class TabInputText {
  constructor(readonly uri: Uri) {}
}
export class TabInputTextDiff {
  constructor(
    readonly original: Uri,
    readonly modified: Uri,
  ) {}
}

export enum DiagnosticSeverity {
  Error = 0,
  Warning = 1,
  Information = 2,
  Hint = 3,
}
export enum ProgressLocation {
  SourceControl = 1,
  Window = 10,
  Notification = 15,
}
export enum ViewColumn {
  Active = -1,
  Beside = -2,
  One = 1,
  Two = 2,
}
export enum ConfigurationTarget {
  Global = 1,
  Workspace = 2,
  WorkspaceFolder = 3,
}
/** index.d.ts 7494 */
export enum StatusBarAlignment {
  Left = 1,
  Right = 2,
}
export enum OverviewRulerLane {
  Left = 1,
  Center = 2,
  Right = 4,
  Full = 7,
}

/** A text document in memory (index.d.ts 94: getText, offsetAt, positionAt, lineAt, lineCount, version). */
export class TextDocument {
  version = 1;
  constructor(
    readonly uri: Uri,
    readonly languageId: string,
    private text: string,
  ) {}
  getText(range?: Range): string {
    return range ? this.text.slice(this.offsetAt(range.start), this.offsetAt(range.end)) : this.text;
  }
  get lineCount(): number {
    return this.text.split('\n').length;
  }
  lineAt(line: number): { lineNumber: number; text: string } {
    return { lineNumber: line, text: this.text.split('\n')[line] ?? '' };
  }
  /** index.d.ts 211: a position past a line's end or the document's end is clamped. */
  offsetAt(p: Position): number {
    const lines = this.text.split('\n');
    if (p.line >= lines.length) return this.text.length;
    const before = lines.slice(0, p.line).reduce((n, l) => n + l.length + 1, 0);
    return before + Math.min(Math.max(0, p.character), lines[p.line].length);
  }
  positionAt(offset: number): Position {
    const before = this.text.slice(0, Math.max(0, Math.min(offset, this.text.length))).split('\n');
    return new Position(before.length - 1, before[before.length - 1].length);
  }
  /** Replaces a range (the double's applyEdit), answering the change as TextDocumentContentChangeEvent says. */
  replace(range: Range, newText: string) {
    const from = this.offsetAt(range.start);
    const to = this.offsetAt(range.end);
    this.text = this.text.slice(0, from) + newText + this.text.slice(to);
    this.version++;
    return { range, rangeOffset: from, rangeLength: to - from, text: newText };
  }
}

type Selector = { language?: string; scheme?: string; pattern?: string } | string;
/** languages.match (index.d.ts 14637), for the selectors extension/ uses: language, scheme and `**\/*.ext`. */
function matches(selector: Selector | Selector[], doc: TextDocument): boolean {
  if (Array.isArray(selector)) return selector.some((s) => matches(s, doc));
  if (typeof selector === 'string') return selector === doc.languageId;
  if (selector.pattern !== undefined && !/^\*\*\/\*\.\w+$/.test(selector.pattern))
    throw new Error(`the vscode double matches only **/*.ext patterns, not ${selector.pattern}`);
  return (
    (selector.language === undefined || selector.language === doc.languageId) &&
    (selector.scheme === undefined || selector.scheme === doc.uri.scheme) &&
    (selector.pattern === undefined || doc.uri.path.endsWith(selector.pattern.slice(3)))
  );
}

interface LensProvider {
  provideCodeLenses(doc: TextDocument): CodeLens[] | Promise<CodeLens[]> | undefined;
}
interface Editor {
  document: TextDocument;
  selection: { active: Position };
  setDecorations(type: unknown, ranges: unknown[]): void;
}

/** What the extension did, for the tests to assert on, and the answers they script. */
export const double = {
  documents: [] as TextDocument[],
  settings: {} as Record<string, unknown>,
  messages: [] as { level: 'info' | 'warning' | 'error'; text: string; items: string[] }[],
  /** The button the user presses on the next message whose text matches (else the message is dismissed). */
  answers: [] as { match: RegExp; item: string }[],
  executed: [] as { command: string; args: unknown[] }[],
  context: {} as Record<string, unknown>,
  applied: [] as { uri: string; range: Range; newText: string }[],
  /** Every withProgress call: its options, the messages reported, and the token source behind its Cancel button. */
  progress: [] as {
    options: { location: ProgressLocation; title?: string; cancellable?: boolean };
    reports: string[];
    source: CancellationTokenSource;
  }[],
  /** Messages each webview panel was posted, by the panel's view type. */
  posted: {} as Record<string, unknown[]>,
  /** Sends a message from a panel's webview to the extension (a button pressed in the view). */
  fromView: {} as Record<string, (message: unknown) => void>,
  log: [] as string[],
  /** Every status bar item the extension created (its text and tooltip as last set), by id. */
  statusBar: {} as Record<
    string,
    { text: string; tooltip: unknown; shown: boolean; history: string[]; tooltips: string[]; background?: string }
  >,
  /** The decorations last set on each visible editor, by document URI (gutter marks). */
  decorations: {} as Record<string, unknown[]>,
  commands: new Map<string, (...args: never[]) => unknown>(),
  lensProviders: [] as { selector: Selector | Selector[]; provider: LensProvider }[],
  changed: new EventEmitter<{ document: TextDocument; contentChanges: ReturnType<TextDocument['replace']>[] }>(),
  activeTextEditor: undefined as Editor | undefined,
  visibleTextEditors: [] as Editor[],
  /** Opens a document in memory (a file on disk, as far as the extension can tell). */
  open(path: string, text: string, languageId = 'lean4'): vscode.TextDocument {
    const doc = new TextDocument(Uri.file(path), languageId, text);
    this.documents.push(doc);
    return doc as unknown as vscode.TextDocument;
  },
  /** Makes `doc` the active editor with the cursor at `position`. */
  focus(doc: vscode.TextDocument, position: vscode.Position): Editor {
    const editor: Editor = {
      document: doc as unknown as TextDocument,
      selection: { active: position },
      setDecorations: (_type, ranges) => void (double.decorations[doc.uri.toString()] = ranges),
    };
    this.activeTextEditor = editor;
    this.visibleTextEditors = [editor];
    return editor;
  },
  /** The user types: replaces `range` in `doc` and fires onDidChangeTextDocument, as an edit in the editor does. */
  type(document: vscode.TextDocument, range: vscode.Range, text: string): void {
    const doc = document as unknown as TextDocument;
    this.changed.fire({ document: doc, contentChanges: [doc.replace(range, text)] });
  },
  reset(): void {
    this.documents = [];
    this.settings = {};
    this.messages = [];
    this.answers = [];
    this.executed = [];
    this.context = {};
    this.applied = [];
    this.progress = [];
    this.posted = {};
    this.fromView = {};
    this.log = [];
    this.statusBar = {};
    this.decorations = {};
    this.commands.clear();
    this.lensProviders = [];
    this.changed.dispose();
    this.activeTextEditor = undefined;
    this.visibleTextEditors = [];
  },
};

function find(uri: Uri): TextDocument | undefined {
  return double.documents.find((d) => d.uri.toString() === uri.toString());
}

function message(level: 'info' | 'warning' | 'error') {
  /** index.d.ts 11221: resolves to the item pressed, or undefined when dismissed. */
  return (text: string, ...items: unknown[]): Promise<string | undefined> => {
    const buttons = items.filter((i): i is string => typeof i === 'string');
    double.messages.push({ level, text, items: buttons });
    const at = double.answers.findIndex((a) => a.match.test(text));
    const answer = at >= 0 ? double.answers.splice(at, 1)[0].item : undefined;
    return Promise.resolve(answer !== undefined && buttons.includes(answer) ? answer : undefined);
  };
}

const noEvent = new EventEmitter<never>().event;

export const window = {
  get activeTextEditor() {
    return double.activeTextEditor;
  },
  get visibleTextEditors() {
    return double.visibleTextEditors;
  },
  showInformationMessage: message('info'),
  showWarningMessage: message('warning'),
  showErrorMessage: message('error'),
  /** Dismissed (undefined) unless a test scripts an answer in `double.answers` keyed by the title. */
  showQuickPick: async <T>(items: T[], options?: { title?: string }): Promise<T | undefined> => {
    const at = double.answers.findIndex((a) => a.match.test(options?.title ?? ''));
    if (at < 0) return undefined;
    const label = double.answers.splice(at, 1)[0].item;
    return items.find((i) => (i as { label?: string }).label === label);
  },
  /** Dismissed (undefined) unless a test scripts an answer in `double.answers` keyed by the title. */
  showInputBox: async (options?: { title?: string }): Promise<string | undefined> => {
    const at = double.answers.findIndex((a) => a.match.test(options?.title ?? ''));
    return at < 0 ? undefined : double.answers.splice(at, 1)[0].item;
  },
  /** index.d.ts 11578: an item whose text and tooltip, as set, the test reads in `double.statusBar` (history, tooltips: every text and tooltip set). */
  createStatusBarItem: (id: string) => {
    const entry = {
      text: '',
      tooltip: undefined as unknown,
      shown: false,
      history: [] as string[],
      tooltips: [] as string[],
      background: undefined as string | undefined,
    };
    double.statusBar[id] = entry;
    return {
      id,
      name: '',
      command: undefined as unknown,
      get backgroundColor(): ThemeColor | undefined {
        return entry.background === undefined ? undefined : new ThemeColor(entry.background);
      },
      set backgroundColor(c: ThemeColor | undefined) {
        entry.background = c?.id;
      },
      get text() {
        return entry.text;
      },
      set text(t: string) {
        entry.text = t;
        entry.history.push(t);
      },
      get tooltip() {
        return entry.tooltip;
      },
      set tooltip(t: unknown) {
        entry.tooltip = t;
        const text = typeof t === 'string' ? t : (t as { value?: string } | undefined)?.value;
        if (text) entry.tooltips.push(text);
      },
      show: () => void (entry.shown = true),
      hide: () => void (entry.shown = false),
      dispose: () => void delete double.statusBar[id],
    };
  },
  /** index.d.ts 11559: runs the task with a progress reporter and a token that the notification's Cancel cancels. */
  withProgress: async <R>(
    options: { location: ProgressLocation; title?: string; cancellable?: boolean },
    task: (progress: { report(v: { message?: string }): void }, token: CancellationTokenSource['token']) => Promise<R>,
  ): Promise<R> => {
    const entry = { options, reports: [] as string[], source: new CancellationTokenSource() };
    double.progress.push(entry);
    return task({ report: (v) => void (v.message !== undefined && entry.reports.push(v.message)) }, entry.source.token);
  },
  createOutputChannel: (name: string) => {
    const line = (level: string) => (text: string) => void double.log.push(`${level} ${text}`);
    return {
      name,
      info: line('info'),
      warn: line('warn'),
      error: line('error'),
      debug: line('debug'),
      trace: line('trace'),
      appendLine: line('line'),
      append: line('text'),
      show: () => void double.executed.push({ command: '(log shown)', args: [name] }),
      dispose: () => {},
    };
  },
  /** index.d.ts 11484: a panel whose webview records what is posted to it. */
  createWebviewPanel: (viewType: string) => {
    const received = new EventEmitter<unknown>();
    const disposed = new EventEmitter<void>();
    double.posted[viewType] = [];
    double.fromView[viewType] = (m) => received.fire(m);
    return {
      viewType,
      iconPath: undefined as unknown,
      webview: {
        html: '',
        cspSource: 'vscode-double:',
        asWebviewUri: (u: Uri) => u,
        postMessage: async (m: unknown) => (double.posted[viewType].push(m), true),
        onDidReceiveMessage: received.event,
      },
      reveal: () => {},
      onDidDispose: disposed.event,
      dispose: () => disposed.fire(),
    };
  },
  createTextEditorDecorationType: () => ({ key: 'double', dispose: () => {} }),
  onDidChangeVisibleTextEditors: noEvent,
  showTextDocument: async (doc: TextDocument) => {
    const editor = double.focus(
      doc as unknown as vscode.TextDocument,
      new Position(0, 0) as unknown as vscode.Position,
    );
    return editor;
  },
  tabGroups: { all: [] as { viewColumn: ViewColumn; tabs: { input: unknown }[] }[], close: async () => true },
};

export const workspace = {
  isTrusted: true,
  workspaceFolders: undefined as { uri: Uri }[] | undefined,
  get textDocuments() {
    return double.documents;
  },
  /** index.d.ts 14019, 14082: a document of the workspace by URI, or an untitled one with the given content. */
  openTextDocument: async (arg: Uri | { language?: string; content?: string }): Promise<TextDocument> => {
    if (arg instanceof Uri) {
      const doc = find(arg);
      if (!doc) throw new Error(`the vscode double has no document ${arg.toString()}`);
      return doc;
    }
    const doc = new TextDocument(
      Uri.from({ scheme: 'untitled', path: `Untitled-${double.documents.length + 1}` }),
      arg.language ?? 'plaintext',
      arg.content ?? '',
    );
    double.documents.push(doc);
    return doc;
  },
  /** index.d.ts 13763: with no workspace folder, the input path itself. */
  asRelativePath: (u: Uri | string) => (typeof u === 'string' ? u : u.fsPath),
  /** The kimina.* settings: what a test set in `double.settings`, else the default the caller passes. */
  getConfiguration: (section: string) => ({
    get: <T>(key: string, fallback?: T): T | undefined =>
      `${section}.${key}` in double.settings ? (double.settings[`${section}.${key}`] as T) : fallback,
    update: async (key: string, value: unknown) => void (double.settings[`${section}.${key}`] = value),
  }),
  /**
   * index.d.ts 13993: applies the text edits, firing onDidChangeTextDocument; all or nothing: false (nothing
   * applied) when a resource is not open. The double takes one edit per document (all extension/ sends), since
   * VS Code reads every range of one edit against the document as it was before it.
   */
  applyEdit: async (edit: WorkspaceEdit): Promise<boolean> => {
    if (edit.edits.some((e) => !find(e.uri))) return false;
    const uris = edit.edits.map((e) => e.uri.toString());
    if (new Set(uris).size !== uris.length) throw new Error('the vscode double applies one text edit per document');
    for (const e of edit.edits) {
      const doc = find(e.uri)!;
      double.applied.push({ uri: e.uri.toString(), range: e.range, newText: e.newText });
      double.changed.fire({ document: doc, contentChanges: [doc.replace(e.range, e.newText)] });
    }
    return true;
  },
  onDidChangeTextDocument: (
    listener: (e: { document: TextDocument; contentChanges: ReturnType<TextDocument['replace']>[] }) => unknown,
  ) => double.changed.event(listener),
  registerTextDocumentContentProvider: () => new Disposable(() => {}),
  onDidGrantWorkspaceTrust: noEvent,
  onDidChangeConfiguration: noEvent,
};

export const languages = {
  registerCodeLensProvider: (selector: Selector | Selector[], provider: LensProvider): Disposable => {
    const entry = { selector, provider };
    double.lensProviders.push(entry);
    return new Disposable(() => (double.lensProviders = double.lensProviders.filter((p) => p !== entry)));
  },
  registerCodeActionsProvider: () => new Disposable(() => {}),
  createDiagnosticCollection: () => ({ set: () => {}, delete: () => {}, clear: () => {}, dispose: () => {} }),
  /** No language server publishes diagnostics here (no vscode-lean4). */
  getDiagnostics: () => [],
  onDidChangeDiagnostics: noEvent,
};

export const commands = {
  registerCommand: (id: string, fn: (...args: never[]) => unknown): Disposable => {
    if (double.commands.has(id)) throw new Error(`command '${id}' already exists`); // as VS Code refuses
    double.commands.set(id, fn);
    return new Disposable(() => double.commands.delete(id));
  },
  /**
   * index.d.ts 10959. Built-ins (code.visualstudio.com/api/references/commands): `setContext` sets a context key;
   * `vscode.executeCodeLensProvider` (uri) answers every registered provider's lenses for that document. Other
   * commands run when registered; the rest (VS Code's own, e.g. vscode.diff) are only recorded.
   */
  executeCommand: async (command: string, ...args: unknown[]): Promise<unknown> => {
    double.executed.push({ command, args });
    if (command === 'setContext') {
      double.context[args[0] as string] = args[1];
      return undefined;
    }
    if (command === 'vscode.executeCodeLensProvider') {
      const doc = find(args[0] as Uri);
      if (!doc) return [];
      const all = await Promise.all(
        double.lensProviders.filter((p) => matches(p.selector, doc)).map((p) => p.provider.provideCodeLenses(doc)),
      );
      return all.flatMap((l) => l ?? []);
    }
    const fn = double.commands.get(command);
    return fn ? (fn as (...a: unknown[]) => unknown)(...args) : undefined;
  },
};

/** No other extension is installed (vscode-lean4's goal is not asked for). */
export const extensions = { getExtension: () => undefined };
