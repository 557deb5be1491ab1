package dev.nepenthe.core.internal.storage;

import dev.nepenthe.core.internal.io.ChecksummedFiles;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/**
 * An immutable segment: every live sealed record of one shard bucket at a checkpoint, in a
 * checksummed file. A bucket is rewritten whole (a new file) when it changes; the old file is
 * deleted once the manifest names the new one.
 */
final class SegmentFiles {
    static final String FORMAT = "nepenthe-segment";
    static final int VERSION = 1;

    private SegmentFiles() {}

    static String name(int bucket, long id) {
        return String.format("b%04d-%012d.seg", bucket, id);
    }

    static void write(Path file, int bucket, Collection<SealedRecord> records) throws IOException {
        ChecksummedFiles.write(file, FORMAT, VERSION, ChecksummedFiles.newFileId(), out -> {
            out.writeInt(bucket);
            out.writeInt(records.size());
            for (SealedRecord r : records) {
                r.write(out);
            }
        });
    }

    static List<SealedRecord> read(Path file, int expectedBucket) throws IOException {
        return ChecksummedFiles.read(file, FORMAT, VERSION, VERSION, (in, v) -> {
            int bucket = in.readInt();
            if (bucket != expectedBucket) {
                throw new IllegalArgumentException("segment holds bucket " + bucket + ", manifest expects " + expectedBucket);
            }
            int n = in.readInt();
            if (n < 0) {
                throw new IllegalArgumentException("negative record count " + n);
            }
            List<SealedRecord> out = new ArrayList<>(Math.min(n, 1 << 16));
            for (int i = 0; i < n; i++) {
                out.add(SealedRecord.read(in));
            }
            return out;
        });
    }
}
