// A byte-level BPE tokenizer read from a Hugging Face model folder (tokenizer.json + tokenizer_config.json),
// the kind Qwen2/Qwen3 (and so Kimina-Prover) use: NFC normalizer, regex Split pre-tokenizer, ByteLevel
// mapping, BPE merges, added tokens matched on the raw text. Decoding works on bytes, so the streaming
// decoder never emits half a UTF-8 character.
import { readFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

export interface AddedToken {
  id: number;
  content: string;
  special: boolean;
}

export interface EncodeOptions {
  /** Recognise added tokens (`<|im_start|>`, `<think>`, …) written in the text. Default true, as HF does. */
  addedTokens?: boolean;
}

export interface DecodeOptions {
  skipSpecialTokens?: boolean;
}

/** Turns token ids into text piece by piece, holding back bytes of an unfinished UTF-8 character. */
export interface StreamDecoder {
  /** Text completed by this token ('' while a character is still incomplete). */
  push(id: number): string;
  /** Whatever is left (an incomplete character becomes U+FFFD). */
  flush(): string;
}

export interface TokenizerFiles {
  tokenizerJson: unknown;
  tokenizerConfig?: unknown;
  /** Text of a separate chat_template.jinja, when the folder has one. */
  chatTemplateFile?: string;
}

type Json = Record<string, unknown>;

// Rust regex `\s` is Unicode White_Space: unlike JavaScript's it includes U+0085 and excludes U+FEFF.
const WHITE_SPACE = '\\t-\\r \\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';

/**
 * Rewrites a tokenizer.json (Rust regex) pattern for JavaScript's `u` flag: `(?i:…)` groups become
 * explicit case classes, `\s` / `\S` follow Rust's White_Space set.
 */
export function translateRegex(pattern: string): string {
  let out = '';
  let inClass = false;
  let caseless = 0; // depth of open (?i: groups, counted by parentheses
  const stack: boolean[] = [];
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '\\') {
      const next = pattern[i + 1];
      if (next === 's') out += inClass ? WHITE_SPACE : `[${WHITE_SPACE}]`;
      else if (next === 'S') {
        if (inClass) throw new Error(`tokenizer regex: \\S inside a class is not supported: ${pattern}`);
        out += `[^${WHITE_SPACE}]`;
      } else out += c + (next ?? '');
      i++;
      continue;
    }
    if (inClass) {
      if (c === ']') inClass = false;
      out += c;
      continue;
    }
    if (c === '[') {
      inClass = true;
      out += c;
      continue;
    }
    if (c === '(') {
      if (pattern.startsWith('(?i:', i)) {
        stack.push(true);
        caseless++;
        out += '(?:';
        i += 3;
        continue;
      }
      stack.push(false);
      out += c;
      continue;
    }
    if (c === ')') {
      if (stack.pop()) caseless--;
      out += c;
      continue;
    }
    if (caseless > 0 && /[a-zA-Z]/.test(c)) {
      out += `[${c.toLowerCase()}${c.toUpperCase()}]`;
      continue;
    }
    out += c;
  }
  return out;
}

const GPT2_PATTERN = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";

/** GPT-2's map from the 256 byte values to printable characters, and back. */
function byteLevelMaps(): { toChar: string[]; toByte: Map<string, number> } {
  const direct: number[] = [];
  for (let b = 0x21; b <= 0x7e; b++) direct.push(b);
  for (let b = 0xa1; b <= 0xac; b++) direct.push(b);
  for (let b = 0xae; b <= 0xff; b++) direct.push(b);
  const toChar: string[] = new Array(256);
  let next = 0;
  for (let b = 0; b < 256; b++) {
    toChar[b] = String.fromCharCode(direct.includes(b) ? b : 256 + next++);
  }
  const toByte = new Map<string, number>();
  toChar.forEach((c, b) => toByte.set(c, b));
  return { toChar, toByte };
}
const BYTE_MAPS = byteLevelMaps();

type PreTokenizeStep = (pieces: string[]) => string[];

function splitIsolated(regex: RegExp, invert: boolean): PreTokenizeStep {
  if (invert) throw new Error('tokenizer.json: an inverted Split pre-tokenizer is not supported');
  return (pieces) => {
    const out: string[] = [];
    for (const piece of pieces) {
      let last = 0;
      for (const m of piece.matchAll(regex)) {
        const at = m.index ?? 0;
        if (at > last) out.push(piece.slice(last, at));
        if (m[0].length > 0) out.push(m[0]);
        last = at + m[0].length;
      }
      if (last < piece.length) out.push(piece.slice(last));
    }
    return out;
  };
}

function byteLevelStep(cfg: Json): PreTokenizeStep {
  const useRegex = cfg.use_regex !== false;
  const prefixSpace = cfg.add_prefix_space === true;
  const split = useRegex ? splitIsolated(new RegExp(translateRegex(GPT2_PATTERN), 'gu'), false) : null;
  const encoder = new TextEncoder();
  return (pieces) => {
    let work = pieces;
    if (prefixSpace && work.length > 0 && !work[0].startsWith(' ')) work = [' ' + work[0], ...work.slice(1)];
    if (split) work = split(work);
    return work.map((p) => {
      let s = '';
      for (const b of encoder.encode(p)) s += BYTE_MAPS.toChar[b];
      return s;
    });
  };
}

function buildPreTokenizer(cfg: unknown): PreTokenizeStep {
  if (cfg === null || cfg === undefined) return (p) => p;
  const c = cfg as Json;
  switch (c.type) {
    case 'Sequence': {
      const steps = ((c.pretokenizers as unknown[]) ?? []).map(buildPreTokenizer);
      return (pieces) => steps.reduce((acc, step) => step(acc), pieces);
    }
    case 'Split': {
      const pattern = c.pattern as Json;
      const source =
        typeof pattern.Regex === 'string'
          ? translateRegex(pattern.Regex)
          : typeof pattern.String === 'string'
            ? pattern.String.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
            : null;
      if (source === null) throw new Error('tokenizer.json: Split pre-tokenizer without a pattern');
      if (c.behavior !== 'Isolated')
        throw new Error(`tokenizer.json: Split behavior '${String(c.behavior)}' is not supported (only Isolated)`);
      return splitIsolated(new RegExp(source, 'gu'), c.invert === true);
    }
    case 'ByteLevel':
      return byteLevelStep(c);
    default:
      throw new Error(
        `tokenizer.json: pre-tokenizer '${String(c.type)}' is not supported (byte-level BPE tokenizers only)`,
      );
  }
}

function buildNormalizer(cfg: unknown): (s: string) => string {
  if (cfg === null || cfg === undefined) return (s) => s;
  const c = cfg as Json;
  switch (c.type) {
    case 'NFC':
      return (s) => s.normalize('NFC');
    case 'NFKC':
      return (s) => s.normalize('NFKC');
    case 'NFD':
      return (s) => s.normalize('NFD');
    case 'NFKD':
      return (s) => s.normalize('NFKD');
    case 'Sequence': {
      const steps = ((c.normalizers as unknown[]) ?? []).map(buildNormalizer);
      return (s) => steps.reduce((acc, f) => f(acc), s);
    }
    default:
      throw new Error(`tokenizer.json: normalizer '${String(c.type)}' is not supported`);
  }
}

function tokenContent(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  if (v && typeof v === 'object' && typeof (v as Json).content === 'string') return (v as Json).content as string;
  return undefined;
}

export class Tokenizer {
  readonly vocabSize: number;
  /** Every added token (special or not), by id. */
  readonly addedTokens: readonly AddedToken[];
  /** Ids that end a turn: the config's eos_token plus <|im_end|> / <|endoftext|> when present. */
  readonly eosTokenIds: readonly number[];
  readonly eosToken?: string;
  readonly padTokenId?: number;
  /** The Jinja chat template: chat_template.jinja when the folder has one, else tokenizer_config.json's chat_template. */
  readonly chatTemplate?: string;
  /** Values a chat template may reference (bos_token, eos_token, …). */
  readonly templateTokens: Record<string, string>;

  private readonly vocab: Map<string, number>;
  private readonly idToPiece: string[];
  private readonly ranks: Map<string, number>;
  private readonly addedById = new Map<number, AddedToken>();
  private readonly addedByContent = new Map<string, AddedToken>();
  private readonly addedSplitter: RegExp | null;
  private readonly lstrip = new Set<string>();
  private readonly rstrip = new Set<string>();
  private readonly normalize: (s: string) => string;
  private readonly preTokenize: PreTokenizeStep;
  private readonly cache = new Map<string, number[]>();

  constructor(files: TokenizerFiles) {
    const tj = files.tokenizerJson as Json;
    if (!tj || typeof tj !== 'object') throw new Error('tokenizer.json is not a JSON object');
    const model = tj.model as Json | undefined;
    if (model?.type !== 'BPE')
      throw new Error(`tokenizer.json: model type '${String(model?.type)}' is not supported (BPE only)`);
    if (model.byte_fallback === true)
      throw new Error('tokenizer.json: byte_fallback BPE (SentencePiece style) is not supported');
    const decoder = tj.decoder as Json | null;
    if (decoder && decoder.type !== 'ByteLevel')
      throw new Error(`tokenizer.json: decoder '${String(decoder.type)}' is not supported (ByteLevel only)`);

    // Plain loops: Object.entries / forEach over 150k entries cost several times as much at load.
    const vocab = model.vocab as Record<string, number>;
    this.vocab = new Map();
    for (const piece in vocab) this.vocab.set(piece, vocab[piece]);
    this.ranks = new Map();
    const merges = model.merges as Array<string | string[]>;
    for (let rank = 0; rank < merges.length; rank++) {
      const m = merges[rank];
      this.ranks.set(typeof m === 'string' ? m : m[0] + ' ' + m[1], rank);
    }
    this.normalize = buildNormalizer(tj.normalizer);
    this.preTokenize = buildPreTokenizer(tj.pre_tokenizer);

    const added: AddedToken[] = [];
    for (const raw of (tj.added_tokens as Json[] | undefined) ?? []) {
      const t: AddedToken = { id: raw.id as number, content: raw.content as string, special: raw.special === true };
      added.push(t);
      this.addedById.set(t.id, t);
      this.addedByContent.set(t.content, t);
      if (raw.lstrip === true) this.lstrip.add(t.content);
      if (raw.rstrip === true) this.rstrip.add(t.content);
    }
    this.addedTokens = added;
    // Longest first, so a token that is a prefix of another never wins. Each token is a capture group
    // (the match may include whitespace an lstrip/rstrip token absorbs, as HF does).
    const alternatives = [...this.addedByContent.keys()]
      .sort((a, b) => b.length - a.length)
      .map(
        (c) =>
          `${this.lstrip.has(c) ? '\\s*' : ''}(${c.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')})${this.rstrip.has(c) ? '\\s*' : ''}`,
      );
    this.addedSplitter = alternatives.length > 0 ? new RegExp(alternatives.join('|'), 'gu') : null;

    this.idToPiece = [];
    for (const [piece, id] of this.vocab) this.idToPiece[id] = piece;
    let maxId = this.idToPiece.length - 1;
    for (const t of added) if (t.id > maxId) maxId = t.id;
    this.vocabSize = maxId + 1;

    const cfg = (files.tokenizerConfig ?? {}) as Json;
    this.templateTokens = {};
    for (const key of ['bos_token', 'eos_token', 'pad_token', 'unk_token']) {
      const v = tokenContent(cfg[key]);
      if (v !== undefined) this.templateTokens[key] = v;
    }
    this.eosToken = this.templateTokens.eos_token;
    const eos = new Set<number>();
    for (const name of [this.eosToken, '<|im_end|>', '<|endoftext|>']) {
      const id = name === undefined ? undefined : this.tokenToId(name);
      if (id !== undefined) eos.add(id);
    }
    this.eosTokenIds = [...eos];
    const pad = this.templateTokens.pad_token;
    this.padTokenId = pad === undefined ? undefined : this.tokenToId(pad);
    // As transformers: a separate chat_template.jinja wins over tokenizer_config.json's chat_template
    // (transformers 5.23.0, src/transformers/tokenization_utils_base.py, PreTrainedTokenizerBase._from_pretrained:
    // "If independent chat template file(s) exist, they take priority over template entries in the tokenizer
    // config"). vLLM loads the tokenizer through transformers, and our trainer does too.
    this.chatTemplate = files.chatTemplateFile ?? pickChatTemplate(cfg.chat_template);
  }

  tokenToId(token: string): number | undefined {
    return this.addedByContent.get(token)?.id ?? this.vocab.get(token);
  }

  /** The vocabulary entry of an id (byte-level characters for ordinary pieces), or undefined. */
  idToToken(id: number): string | undefined {
    return this.addedById.get(id)?.content ?? this.idToPiece[id];
  }

  isSpecial(id: number): boolean {
    return this.addedById.get(id)?.special === true;
  }

  encode(text: string, options: EncodeOptions = {}): number[] {
    const ids: number[] = [];
    const useAdded = options.addedTokens !== false && this.addedSplitter !== null;
    let last = 0;
    if (useAdded) {
      for (const m of text.matchAll(this.addedSplitter!)) {
        const at = m.index ?? 0;
        if (at > last) this.encodeOrdinary(text.slice(last, at), ids);
        const content = m.slice(1).find((g) => g !== undefined)!;
        ids.push(this.addedByContent.get(content)!.id);
        last = at + m[0].length;
      }
    }
    if (last < text.length) this.encodeOrdinary(text.slice(last), ids);
    return ids;
  }

  decode(ids: readonly number[], options: DecodeOptions = {}): string {
    const stream = this.streamDecoder(options);
    let out = '';
    for (const id of ids) out += stream.push(id);
    return out + stream.flush();
  }

  /** The bytes a token stands for (its UTF-8 text for added tokens). */
  tokenBytes(id: number): Uint8Array {
    const added = this.addedById.get(id);
    if (added) return new TextEncoder().encode(added.content);
    const piece = this.idToPiece[id];
    if (piece === undefined) throw new Error(`token id ${id} is outside the vocabulary (size ${this.vocabSize})`);
    const bytes = new Uint8Array(piece.length);
    for (let i = 0; i < piece.length; i++) {
      const b = BYTE_MAPS.toByte.get(piece[i]);
      if (b === undefined) throw new Error(`token ${id} holds a character outside the byte-level alphabet`);
      bytes[i] = b;
    }
    return bytes;
  }

  streamDecoder(options: DecodeOptions = {}): StreamDecoder {
    const utf8 = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true });
    return {
      push: (id) => {
        if (options.skipSpecialTokens && this.isSpecial(id)) return '';
        return utf8.decode(this.tokenBytes(id), { stream: true });
      },
      flush: () => utf8.decode(),
    };
  }

  private encodeOrdinary(text: string, out: number[]): void {
    for (const word of this.preTokenize([this.normalize(text)])) {
      let ids = this.cache.get(word);
      if (!ids) {
        ids = this.bpe(word);
        if (this.cache.size > 50_000) this.cache.clear();
        this.cache.set(word, ids);
      }
      for (const id of ids) out.push(id);
    }
  }

  /** Merges a byte-level word by rank until no known pair is left. */
  private bpe(word: string): number[] {
    const whole = this.vocab.get(word);
    if (whole !== undefined) return [whole];
    let parts = [...word];
    while (parts.length > 1) {
      let best = -1;
      let bestRank = Infinity;
      for (let i = 0; i < parts.length - 1; i++) {
        const r = this.ranks.get(parts[i] + ' ' + parts[i + 1]);
        if (r !== undefined && r < bestRank) {
          bestRank = r;
          best = i;
        }
      }
      if (best < 0) break;
      const a = parts[best];
      const b = parts[best + 1];
      const merged: string[] = [];
      for (let i = 0; i < parts.length; i++) {
        if (i < parts.length - 1 && parts[i] === a && parts[i + 1] === b) {
          merged.push(a + b);
          i++;
        } else merged.push(parts[i]);
      }
      parts = merged;
    }
    return parts.map((p) => {
      const id = this.vocab.get(p);
      if (id === undefined) throw new Error(`tokenizer.json: no vocabulary entry for piece ${JSON.stringify(p)}`);
      return id;
    });
  }
}

function pickChatTemplate(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  if (Array.isArray(v)) {
    const named = v as Array<{ name?: string; template?: string }>;
    return (named.find((t) => t.name === 'default') ?? named[0])?.template;
  }
  return undefined;
}

/** Builds a tokenizer from already-parsed files (tests, fixtures). */
export function tokenizerFromFiles(files: TokenizerFiles): Tokenizer {
  return new Tokenizer(files);
}

/** Loads tokenizer.json, tokenizer_config.json and chat_template.jinja (when present) from a model folder. */
export async function loadTokenizer(modelDir: string): Promise<Tokenizer> {
  const jsonPath = join(modelDir, 'tokenizer.json');
  if (!existsSync(jsonPath))
    throw new Error(`no tokenizer.json in ${modelDir} (a model folder in the Hugging Face layout is expected)`);
  const readJson = async (p: string): Promise<unknown> => {
    try {
      return JSON.parse(await readFile(p, 'utf8'));
    } catch (err) {
      throw new Error(`cannot read ${p}: ${(err as Error).message}`);
    }
  };
  const configPath = join(modelDir, 'tokenizer_config.json');
  const templatePath = join(modelDir, 'chat_template.jinja');
  return new Tokenizer({
    tokenizerJson: await readJson(jsonPath),
    tokenizerConfig: existsSync(configPath) ? await readJson(configPath) : undefined,
    chatTemplateFile: existsSync(templatePath) ? await readFile(templatePath, 'utf8') : undefined,
  });
}
