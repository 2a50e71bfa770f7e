// R2 multipart uploads on a worker's R2Bucket (85_bindings.js makes the bucket): the
// R2MultipartUpload that `createMultipartUpload()` / `resumeMultipartUpload()` give, with
// workerd's shape (own read-only `key` and `uploadId`, `uploadPart()`, `abort()`, `complete()`)
// and its argument checks. The store (src/runtime/store/multipart.rs, or a handler-backed
// bucket's host side, lib/bindings.js) keeps the parts and answers with R2's errors.

const kMultipart = Symbol("r2 multipart upload");

/** A part number as workerd reads one (an integer from 1 to 10000). */
function checkPartNumber(value) {
  // WebIDL's integer conversion: truncated, NaN and the infinities are 0.
  const number = Number(value);
  const integer = Number.isFinite(number) ? Math.trunc(number) : 0;
  if (!(integer >= 1 && integer <= 10000)) throw new TypeError(`Part number must be between 1 and 10000 (inclusive). Actual value was: ${integer}`);
  return integer;
}

class R2MultipartUpload {
  #bucket;
  constructor(token, bucket, key, uploadId) {
    if (token !== kMultipart) throw new TypeError("Illegal constructor");
    this.#bucket = bucket;
    Object.defineProperty(this, "key", { value: key, enumerable: true });
    Object.defineProperty(this, "uploadId", { value: uploadId, enumerable: true });
  }

  async uploadPart(partNumber, value, options) {
    if (arguments.length < 2) throw new TypeError(`Failed to execute 'uploadPart' on 'R2MultipartUpload': parameter ${arguments.length + 1} is not of type '${arguments.length ? "ReadableStream or ArrayBuffer or ArrayBufferView or string or Blob" : "integer"}'.`);
    partNumber = checkPartNumber(partNumber);
    const accepted = typeof value === "string" || value instanceof ArrayBuffer || ArrayBuffer.isView(value) || value instanceof ReadableStream || value instanceof globalThis.Blob;
    if (!accepted) throw new TypeError("Failed to execute 'uploadPart' on 'R2MultipartUpload': parameter 2 is not of type 'ReadableStream or ArrayBuffer or ArrayBufferView or string or Blob'.");
    const bytes = await internals.r2ValueBytes(value, "uploadPart value");
    const [part] = await internals.hostCall(this.#bucket, "uploadPart", { key: this.key, uploadId: this.uploadId, partNumber }, bytes);
    return { partNumber: part.partNumber, etag: part.etag };
  }

  async abort() {
    await internals.hostCall(this.#bucket, "abortMultipartUpload", { key: this.key, uploadId: this.uploadId });
  }

  async complete(uploadedParts) {
    if (!Array.isArray(uploadedParts)) throw new TypeError("Failed to execute 'complete' on 'R2MultipartUpload': parameter 1 is not of type 'Array'.");
    const parts = [...uploadedParts].map((part, index) => {
      if (part === null || typeof part !== "object") throw new TypeError(`R2MultipartUpload.complete: uploadedParts[${index}] must be an object { partNumber, etag }.`);
      // A part without an etag matches no uploaded part (InvalidPart, from the store).
      return { partNumber: checkPartNumber(part.partNumber), etag: part.etag === undefined ? "" : String(part.etag) };
    });
    const [meta] = await internals.hostCall(this.#bucket, "completeMultipartUpload", { key: this.key, uploadId: this.uploadId, parts });
    return internals.newR2Object(meta);
  }

  get [Symbol.toStringTag]() {
    return "R2MultipartUpload";
  }
}

/** The R2MultipartUpload of upload `uploadId` of `key` on bucket binding `bucket`. */
internals.newR2MultipartUpload = (bucket, key, uploadId) => new R2MultipartUpload(kMultipart, bucket, key, uploadId);

internals.asyncApiPrototypes.push(R2MultipartUpload.prototype);
