// The tokenizer part of a GGUF, from a Hugging Face tokenizer.json (byte-level BPE, as Qwen3's): every id's
// piece, its kind (normal, control for special added tokens, user-defined for other added ones, unused for the
// padding up to the embedding's rows), the merges, and the end-of-turn / padding ids.
export interface GgufTokenizer {
  tokens: string[];
  types: number[];
  merges: string[];
  eosId: number;
  padId: number;
  bosId?: number;
}

/** llama.cpp's token types (llama_token_type). */
const TOKEN_TYPE = { normal: 1, control: 3, userDefined: 4, unused: 5 } as const;

interface TokenizerJson {
  model: { vocab: Record<string, number>; merges: (string | string[])[] };
  added_tokens?: { id: number; content: string; special?: boolean }[];
}

/**
 * The GGUF tokenizer for an embedding of `vocabSize` rows. `eos` and `pad` name tokens (e.g. `<|im_end|>`,
 * `<|endoftext|>`); `bos` optionally (Qwen3 adds none: add_bos_token is written false).
 */
export function ggufTokenizerOf(
  tokenizerJson: unknown,
  vocabSize: number,
  names: { eos: string; pad: string; bos?: string },
): GgufTokenizer {
  const tj = tokenizerJson as TokenizerJson;
  if (!tj?.model?.vocab || !Array.isArray(tj.model.merges))
    throw new Error('tokenizer.json: no BPE vocab and merges for the GGUF');
  const tokens: string[] = new Array(vocabSize);
  const types: number[] = new Array(vocabSize).fill(TOKEN_TYPE.normal);
  const ids = new Map<string, number>();
  const place = (piece: string, id: number, type: number) => {
    if (id >= vocabSize) throw new Error(`tokenizer.json: token ${id} is past the embedding's ${vocabSize} rows`);
    tokens[id] = piece;
    types[id] = type;
    ids.set(piece, id);
  };
  for (const [piece, id] of Object.entries(tj.model.vocab)) place(piece, id, TOKEN_TYPE.normal);
  for (const t of tj.added_tokens ?? [])
    place(t.content, t.id, t.special ? TOKEN_TYPE.control : TOKEN_TYPE.userDefined);
  for (let i = 0; i < vocabSize; i++)
    if (tokens[i] === undefined) {
      tokens[i] = `[PAD${i}]`;
      types[i] = TOKEN_TYPE.unused;
    }
  const idOf = (name: string) => {
    const id = ids.get(name);
    if (id === undefined) throw new Error(`tokenizer.json has no token ${JSON.stringify(name)}`);
    return id;
  };
  return {
    tokens,
    types,
    merges: tj.model.merges.map((m) => (Array.isArray(m) ? m.join(' ') : m)),
    eosId: idOf(names.eos),
    padId: idOf(names.pad),
    bosId: names.bos === undefined ? undefined : idOf(names.bos),
  };
}
