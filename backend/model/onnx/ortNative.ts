// onnxruntime's C API reached from TypeScript through koffi (an FFI with prebuilt binaries for linux
// x64/arm64, darwin x64/arm64 and win32 x64), loading the libonnxruntime shared library that
// onnxruntime-node already ships. What the Node binding cannot do and this can: hand onnxruntime
// preallocated outputs, so one OrtValue can be both a graph input and a graph output (the
// GroupQueryAttention cache shared in place) and the logits land in a buffer we own, copied never.
//
// The OrtApi table is a struct of function pointers whose order is fixed by onnxruntime (new entries are
// only ever appended; onnxruntime_c_api.h): the indices below are the positions of the few we call.
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';

type Koffi = typeof import('koffi');

/** Positions in the OrtApi struct (onnxruntime_c_api.h, stable since they were added). */
const API = {
  GetErrorMessage: 2,
  CreateEnv: 3,
  CreateSession: 7,
  Run: 9,
  CreateSessionOptions: 10,
  SetSessionExecutionMode: 13,
  EnableProfiling: 14,
  SetSessionLogSeverityLevel: 22,
  SetSessionGraphOptimizationLevel: 23,
  SetIntraOpNumThreads: 24,
  SetInterOpNumThreads: 25,
  SessionGetInputCount: 30,
  SessionGetOutputCount: 31,
  SessionGetInputName: 36,
  SessionGetOutputName: 37,
  CreateTensorWithDataAsOrtValue: 49,
  CreateCpuMemoryInfo: 69,
  AllocatorFree: 76,
  GetAllocatorWithDefaultOptions: 78,
  ReleaseEnv: 92,
  ReleaseStatus: 93,
  ReleaseMemoryInfo: 94,
  ReleaseSession: 95,
  ReleaseValue: 96,
  ReleaseSessionOptions: 100,
  SessionEndProfiling: 110,
  AddSessionConfigEntry: 130,
} as const;
/** The C API version asked for: 1.30 serves every version up to its own; 17 (1.17) has all of the above. */
const API_VERSION = 17;

export enum ElementType {
  FLOAT = 1,
  UINT8 = 2,
  INT8 = 3,
  INT32 = 6,
  INT64 = 7,
  FLOAT16 = 10,
}

export type NativeArray = Float32Array | Int32Array | BigInt64Array | Uint16Array | Int8Array | Uint8Array;

/** An opaque native pointer as koffi hands it out. */
type Ptr = unknown;

export interface NativeSessionOptions {
  threads: number;
  spinning?: boolean;
  dynamicBlocks?: boolean;
  /** onnxruntime's profiler on, its JSON written at this path prefix (`NativeSession.endProfiling` says where). */
  profilePrefix?: string;
}

/** onnxruntime-node's libonnxruntime for this platform (the folder of its native binding). */
function ortLibraryPath(): string {
  const pkg = dirname(require.resolve('onnxruntime-node/package.json'));
  const binRoot = join(pkg, 'bin');
  const os = process.platform;
  const arch = process.arch;
  const file = os === 'win32' ? 'onnxruntime.dll' : os === 'darwin' ? 'libonnxruntime.1.dylib' : 'libonnxruntime.so.1';
  const napi = existsSync(binRoot) ? readdirSync(binRoot).filter((d) => d.startsWith('napi-v')) : [];
  for (const dir of napi) {
    const folder = join(binRoot, dir, os, arch);
    if (!existsSync(folder)) continue;
    if (existsSync(join(folder, file))) return join(folder, file);
    const any = readdirSync(folder).find((f) => /^(lib)?onnxruntime[.\d]*\.(so|dylib|dll)[.\d]*$/.test(f));
    if (any) return join(folder, any);
  }
  throw new Error(`onnxruntime-node ships no onnxruntime library for ${os}-${arch} (looked in ${binRoot})`);
}

/**
 * The C API: one environment per process (onnxruntime allows one), sessions, tensors over memory we own.
 * Throws when koffi or the library cannot be loaded; callers fall back to the Node binding.
 */
export class OrtNative {
  private static instance?: OrtNative;
  readonly version: string;
  private readonly fns: Record<keyof typeof API, (...args: unknown[]) => unknown>;
  private readonly env: Ptr;
  private readonly cpu: Ptr;

  private constructor(
    private readonly koffi: Koffi,
    readonly libraryPath: string,
  ) {
    const lib = koffi.load(libraryPath);
    const apiBaseT = koffi.struct('OrtApiBase', { GetApi: 'void *', GetVersionString: 'void *' });
    const getApiBase = lib.func('OrtGetApiBase', koffi.pointer(apiBaseT), []);
    const base = koffi.decode(getApiBase(), apiBaseT) as { GetApi: Ptr; GetVersionString: Ptr };
    this.version = koffi.call(base.GetVersionString, koffi.proto('const char *ortVersionString()')) as string;
    const api = koffi.call(base.GetApi, koffi.proto('void *ortGetApi(uint32_t)'), API_VERSION) as Ptr;
    if (!api) throw new Error(`onnxruntime ${this.version} does not serve C API version ${API_VERSION}`);
    const table = koffi.decode(api, koffi.array('void *', API.AddSessionConfigEntry + 1)) as Ptr[];
    const sig: Record<keyof typeof API, string> = {
      GetErrorMessage: 'const char *f(void *status)',
      CreateEnv: 'void *f(int level, const char *logid, _Out_ void **env)',
      CreateSession: 'void *f(void *env, const char *path, void *options, _Out_ void **session)',
      Run: 'void *f(void *session, void *runOptions, const char **inNames, void **inputs, size_t nIn, const char **outNames, size_t nOut, void **outputs)',
      CreateSessionOptions: 'void *f(_Out_ void **options)',
      SetSessionExecutionMode: 'void *f(void *options, int mode)',
      EnableProfiling: 'void *f(void *options, const char *prefix)', // ORTCHAR_T: char off Windows
      SetSessionLogSeverityLevel: 'void *f(void *options, int level)',
      SetSessionGraphOptimizationLevel: 'void *f(void *options, int level)',
      SetIntraOpNumThreads: 'void *f(void *options, int n)',
      SetInterOpNumThreads: 'void *f(void *options, int n)',
      SessionGetInputCount: 'void *f(void *session, _Out_ size_t *n)',
      SessionGetOutputCount: 'void *f(void *session, _Out_ size_t *n)',
      SessionGetInputName: 'void *f(void *session, size_t i, void *allocator, _Out_ void **name)',
      SessionGetOutputName: 'void *f(void *session, size_t i, void *allocator, _Out_ void **name)',
      CreateTensorWithDataAsOrtValue:
        'void *f(void *info, void *data, size_t bytes, const int64_t *shape, size_t rank, int type, _Out_ void **value)',
      CreateCpuMemoryInfo: 'void *f(int allocatorType, int memType, _Out_ void **info)',
      AllocatorFree: 'void *f(void *allocator, void *p)',
      GetAllocatorWithDefaultOptions: 'void *f(_Out_ void **allocator)',
      ReleaseEnv: 'void f(void *p)',
      ReleaseStatus: 'void f(void *p)',
      ReleaseMemoryInfo: 'void f(void *p)',
      ReleaseSession: 'void f(void *p)',
      ReleaseValue: 'void f(void *p)',
      ReleaseSessionOptions: 'void f(void *p)',
      SessionEndProfiling: 'void *f(void *session, void *allocator, _Out_ void **path)',
      AddSessionConfigEntry: 'void *f(void *options, const char *key, const char *value)',
    };
    const fns = {} as Record<keyof typeof API, (...args: unknown[]) => unknown>;
    for (const name of Object.keys(API) as (keyof typeof API)[]) {
      const proto = koffi.proto(sig[name].replace(/\bf\(/, `ort${name}(`));
      const fn = koffi.decode(table[API[name]], proto) as (...args: unknown[]) => unknown;
      fns[name] = fn;
    }
    this.fns = fns;
    const env = [null];
    this.check(this.fns.CreateEnv(3, 'kimina', env), 'CreateEnv');
    this.env = env[0];
    const info = [null];
    // OrtArenaAllocator (1), OrtMemTypeDefault (0).
    this.check(this.fns.CreateCpuMemoryInfo(1, 0, info), 'CreateCpuMemoryInfo');
    this.cpu = info[0];
  }

  /**
   * The process's C API, loaded on first use (koffi and libonnxruntime from onnxruntime-node). `libraryPath`,
   * on that first call, loads another build of libonnxruntime instead: the benchmarks' A/B of onnxruntime
   * versions (KIMINA_ORT_LIBRARY, bench/nativeDecode.ts); the extension never passes it.
   */
  static load(libraryPath?: string): OrtNative {
    if (!OrtNative.instance) {
      // Resolved at run time: a missing or unloadable koffi must not break the module graph.
      const koffi = require(['koffi'][0]) as Koffi;
      OrtNative.instance = new OrtNative(koffi, libraryPath ?? ortLibraryPath());
    }
    return OrtNative.instance;
  }

  private check(status: unknown, what: string): void {
    if (!status) return;
    const message = this.fns.GetErrorMessage(status) as string;
    this.fns.ReleaseStatus(status);
    throw new Error(`onnxruntime ${what}: ${message}`);
  }

  createSession(path: string, options: NativeSessionOptions): NativeSession {
    const out = [null];
    this.check(this.fns.CreateSessionOptions(out), 'CreateSessionOptions');
    const so = out[0];
    try {
      this.check(this.fns.SetIntraOpNumThreads(so, options.threads), 'SetIntraOpNumThreads');
      this.check(this.fns.SetInterOpNumThreads(so, 1), 'SetInterOpNumThreads');
      this.check(this.fns.SetSessionExecutionMode(so, 0), 'SetSessionExecutionMode');
      this.check(this.fns.SetSessionGraphOptimizationLevel(so, 99), 'SetSessionGraphOptimizationLevel');
      this.check(this.fns.SetSessionLogSeverityLevel(so, 3), 'SetSessionLogSeverityLevel');
      // The same thread-pool settings as the Node binding's sessions (session.ts explains both).
      const spin = options.spinning ? '1' : '0';
      this.check(this.fns.AddSessionConfigEntry(so, 'session.intra_op.allow_spinning', spin), 'config');
      this.check(this.fns.AddSessionConfigEntry(so, 'session.inter_op.allow_spinning', spin), 'config');
      if (options.dynamicBlocks !== false)
        this.check(this.fns.AddSessionConfigEntry(so, 'session.dynamic_block_base', '4'), 'config');
      if (options.profilePrefix) this.check(this.fns.EnableProfiling(so, options.profilePrefix), 'EnableProfiling');
      const session = [null];
      this.check(this.fns.CreateSession(this.env, path, so, session), 'CreateSession');
      return new NativeSession(this, session[0], this.names(session[0], 'Input'), this.names(session[0], 'Output'));
    } finally {
      this.fns.ReleaseSessionOptions(so);
    }
  }

  private names(session: Ptr, kind: 'Input' | 'Output'): string[] {
    const count = [0];
    this.check(this.fns[`SessionGet${kind}Count`](session, count), `SessionGet${kind}Count`);
    const alloc = [null];
    this.check(this.fns.GetAllocatorWithDefaultOptions(alloc), 'GetAllocatorWithDefaultOptions');
    const names: string[] = [];
    for (let i = 0; i < Number(count[0]); i++) {
      const p = [null];
      this.check(this.fns[`SessionGet${kind}Name`](session, i, alloc[0], p), `SessionGet${kind}Name`);
      names.push(this.koffi.decode(p[0], 'char', -1) as string);
      this.check(this.fns.AllocatorFree(alloc[0], p[0]), 'AllocatorFree');
    }
    return names;
  }

  /**
   * A tensor over `data` (not copied). The caller keeps `data` alive and in place while the value
   * lives: only off-heap memory qualifies (ArrayBuffers V8 never moves; see `nativeBuffer`).
   */
  tensor(type: ElementType, data: NativeArray, dims: number[]): NativeValue {
    const out = [null];
    const shape = BigInt64Array.from(dims.map(BigInt));
    this.check(
      this.fns.CreateTensorWithDataAsOrtValue(this.cpu, data, data.byteLength, shape, dims.length, type, out),
      'CreateTensorWithDataAsOrtValue',
    );
    return new NativeValue(this, out[0], data);
  }

  /** @internal */
  release(kind: 'Value' | 'Session', p: Ptr): void {
    this.fns[`Release${kind}`](p);
  }

  /** @internal Stops the session's profiler; the path of the JSON file it wrote. */
  endProfiling(session: Ptr): string {
    const alloc = [null];
    this.check(this.fns.GetAllocatorWithDefaultOptions(alloc), 'GetAllocatorWithDefaultOptions');
    const p = [null];
    this.check(this.fns.SessionEndProfiling(session, alloc[0], p), 'SessionEndProfiling');
    const path = this.koffi.decode(p[0], 'char', -1) as string;
    this.check(this.fns.AllocatorFree(alloc[0], p[0]), 'AllocatorFree');
    return path;
  }

  /** @internal */
  run(session: Ptr, inNames: string[], inputs: Ptr[], outNames: string[], outputs: Ptr[]): void {
    this.check(this.fns.Run(session, null, inNames, inputs, inputs.length, outNames, outNames.length, outputs), 'Run');
  }
}

/** Memory for a tensor that onnxruntime may keep a pointer to: off the V8 heap, never moved. */
export function nativeBuffer<T extends NativeArray>(make: (buffer: ArrayBuffer) => T, bytes: number): T {
  // Typed arrays of up to 64 bytes made by length live on the V8 heap, where the garbage collector moves
  // them; an ArrayBuffer made on its own has a fixed backing store (at least 128 bytes asked, to be sure).
  return make(new ArrayBuffer(Math.max(128, bytes)));
}

export class NativeValue {
  private released = false;
  constructor(
    private readonly ort: OrtNative,
    readonly handle: Ptr,
    /** The memory it views, referenced so it outlives the value. */
    readonly data: NativeArray,
  ) {}

  release(): void {
    if (this.released) return;
    this.released = true;
    this.ort.release('Value', this.handle);
  }
}

export class NativeSession {
  constructor(
    private readonly ort: OrtNative,
    private readonly handle: Ptr,
    readonly inputNames: string[],
    readonly outputNames: string[],
  ) {}

  /** Runs with every output preallocated: onnxruntime writes into those buffers, nothing is copied out. */
  run(inputs: Map<string, NativeValue>, outputs: Map<string, NativeValue>): void {
    this.ort.run(
      this.handle,
      [...inputs.keys()],
      [...inputs.values()].map((v) => v.handle),
      [...outputs.keys()],
      [...outputs.values()].map((v) => v.handle),
    );
  }

  /** Stops onnxruntime's profiler (the session was made with `profilePrefix`): the JSON file's path. */
  endProfiling(): string {
    return this.ort.endProfiling(this.handle);
  }

  release(): void {
    this.ort.release('Session', this.handle);
  }
}
