import { Transform } from "node:stream";
import { uploadHash } from "./hash-workers.js";
import { ObjectMismatchError } from "./object-store.js";

/**
 * A Transform that counts and hashes (SHA-256, on the hashing workers for large objects) what passes, and
 * fails, before its end, when the bytes are more or fewer than `size` or do not hash to `oid`: a consumer
 * that only acts on a stream that ended cleanly (a rename into place, a completed upload) never acts on a
 * mismatch. Both object stores write through it.
 */
export function verifyingStream(oid: string, size: number, highWaterMark: number): Transform {
  const hash = uploadHash(size);
  let received = 0;
  return new Transform({
    highWaterMark,
    transform(chunk: Buffer, _encoding, done) {
      received += chunk.length;
      if (received > size)
        return done(new ObjectMismatchError(`More than the announced ${size} bytes were sent.`));
      const behind = hash.update(chunk);
      if (behind) behind.then(() => done(null, chunk), done);
      else done(null, chunk);
    },
    flush(done) {
      if (received !== size)
        return done(new ObjectMismatchError(`${received} bytes arrived, ${size} were announced.`));
      hash
        .digest()
        .then(
          (digest) =>
            done(
              digest === oid ? null : new ObjectMismatchError("The content does not hash to the object id."),
            ),
          done,
        );
    },
    destroy(err, done) {
      hash.close();
      done(err);
    },
  });
}
