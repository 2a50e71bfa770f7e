// Types of R2 as a worker and Node see it (the R2Bucket of `storage()`'s binding and of
// `storage().bucket()`): its objects, checksums, conditions and multipart uploads, as workerd's.
// index.d.ts re-exports them.

export interface R2HttpMetadata {
  contentType?: string;
  contentLanguage?: string;
  contentDisposition?: string;
  contentEncoding?: string;
  cacheControl?: string;
  cacheExpiry?: Date | number;
}

export interface R2Object {
  readonly key: string;
  readonly version: string;
  readonly size: number;
  readonly etag: string;
  readonly httpEtag: string;
  readonly uploaded: Date;
  readonly httpMetadata: R2HttpMetadata;
  readonly customMetadata: Record<string, string>;
  readonly range?: { offset?: number; length?: number; suffix?: number };
  /** MD5 (not for a multipart object) and the SHA checksums put() was given, as ArrayBuffers; toJSON() as hex. */
  readonly checksums: R2Checksums;
  /** The storage class put() was given, "Standard" without one. */
  readonly storageClass: string;
  /** The hex MD5 of the SSE-C key put() was given. */
  readonly ssecKeyMd5?: string;
  writeHttpMetadata(headers: Headers): void;
}

export interface R2Checksums {
  readonly md5?: ArrayBuffer;
  readonly sha1?: ArrayBuffer;
  readonly sha256?: ArrayBuffer;
  readonly sha384?: ArrayBuffer;
  readonly sha512?: ArrayBuffer;
  toJSON(): { md5?: string; sha1?: string; sha256?: string; sha384?: string; sha512?: string };
}

export interface R2ObjectBody extends R2Object {
  readonly body: ReadableStream;
  readonly bodyUsed: boolean;
  arrayBuffer(): Promise<ArrayBuffer>;
  bytes(): Promise<Uint8Array>;
  text(): Promise<string>;
  json<T = unknown>(): Promise<T>;
  blob(): Promise<Blob>;
}

export interface R2Conditional {
  etagMatches?: string;
  etagDoesNotMatch?: string;
  uploadedBefore?: Date;
  uploadedAfter?: Date;
}

export interface R2Bucket {
  head(key: string): Promise<R2Object | null>;
  get(key: string, options?: { onlyIf?: R2Conditional | Headers; range?: { offset?: number; length?: number } | { suffix: number } | Headers; ssecKey?: ArrayBuffer | string }): Promise<R2ObjectBody | R2Object | null>;
  put(
    key: string,
    value: string | ArrayBuffer | ArrayBufferView | ReadableStream | Blob | null,
    options?: { httpMetadata?: R2HttpMetadata | Headers; customMetadata?: Record<string, string>; onlyIf?: R2Conditional | Headers; storageClass?: string; ssecKey?: ArrayBuffer | string; md5?: ArrayBuffer | string; sha1?: ArrayBuffer | string; sha256?: ArrayBuffer | string; sha384?: ArrayBuffer | string; sha512?: ArrayBuffer | string },
  ): Promise<R2Object | null>;
  delete(keys: string | string[]): Promise<void>;
  list(options?: { prefix?: string; delimiter?: string; cursor?: string; startAfter?: string; limit?: number; include?: ("httpMetadata" | "customMetadata")[] }): Promise<{ objects: R2Object[]; truncated: boolean; cursor?: string; delimitedPrefixes: string[] }>;
  createMultipartUpload(key: string, options?: { httpMetadata?: R2HttpMetadata | Headers; customMetadata?: Record<string, string>; storageClass?: string; ssecKey?: ArrayBuffer | string }): Promise<R2MultipartUpload>;
  resumeMultipartUpload(key: string, uploadId: string): R2MultipartUpload;
}

export interface R2UploadedPart {
  partNumber: number;
  etag: string;
}

/** An upload in progress: parts (1 to 10000; all but the last at least 5 MiB, of one size). */
export interface R2MultipartUpload {
  readonly key: string;
  readonly uploadId: string;
  uploadPart(partNumber: number, value: string | ArrayBuffer | ArrayBufferView | ReadableStream | Blob): Promise<R2UploadedPart>;
  abort(): Promise<void>;
  complete(uploadedParts: R2UploadedPart[]): Promise<R2Object>;
}
