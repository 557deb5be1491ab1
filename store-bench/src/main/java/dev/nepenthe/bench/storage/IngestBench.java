package dev.nepenthe.bench.storage;

import dev.nepenthe.core.Durability;
import dev.nepenthe.core.VectorRecord;
import dev.nepenthe.core.internal.crypto.DataKey;
import dev.nepenthe.core.internal.crypto.KeyedHash;
import dev.nepenthe.core.internal.crypto.Keystore;
import dev.nepenthe.core.internal.crypto.MasterKey;
import dev.nepenthe.core.internal.io.StorageFault;
import dev.nepenthe.core.internal.io.TestPoints;
import dev.nepenthe.core.internal.storage.CollectionStorage;
import dev.nepenthe.core.internal.storage.CollectionStorage.Placed;
import dev.nepenthe.core.internal.storage.RecordSealer;
import dev.nepenthe.core.internal.storage.StoreContext;
import dev.nepenthe.core.internal.storage.TombstoneJournal;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.stream.Stream;

/**
 * Durable ingest throughput of the storage layer (write-ahead log with fsync before ack,
 * checkpoints into segments), at batch sizes 1, 100 and 1000, with AES-256-GCM and with a
 * pass-through sealer that exists only here, in the same run. Each cell is the median of {@code
 * --repeats} runs, the two sealers alternating so drift on a shared machine hits both.
 *
 * <p>Usage: {@code ./nepenthe bench ingest [--records N] [--repeats R] [--dim D] [--dir DIR]}
 */
public final class IngestBench {

    /** Copies the bytes; the cost left is what every sealer pays (framing, allocation). */
    static final RecordSealer PASS_THROUGH =
            new RecordSealer() {
                @Override
                public byte[] seal(DataKey key, byte[] aad, byte[] plaintext) {
                    return plaintext.clone();
                }

                @Override
                public byte[] open(DataKey key, byte[] aad, byte[] sealed) {
                    return sealed.clone();
                }
            };

    public static void main(String[] args) throws IOException {
        int records = 20_000;
        int repeats = 3;
        int dim = 384;
        Path base = Path.of(System.getProperty("java.io.tmpdir"));
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--records" -> records = Integer.parseInt(args[++i]);
                case "--repeats" -> repeats = Integer.parseInt(args[++i]);
                case "--dim" -> dim = Integer.parseInt(args[++i]);
                case "--dir" -> base = Path.of(args[++i]);
                default ->
                        throw new IllegalArgumentException(
                                "unknown option "
                                        + args[i]
                                        + "; expected --records N --repeats R --dim D --dir DIR");
            }
        }
        List<VectorRecord> data = records(records, dim);
        System.out.printf(
                Locale.ROOT,
                "ingest: %d records of dimension %d (+ ~200 B text, 3 metadata), fsync before ack,"
                        + " median of %d runs%n%n",
                records,
                dim,
                repeats);
        System.out.println(
                "| batch | AES-256-GCM, records/s | pass-through, records/s | cost of encryption"
                        + " |");
        System.out.println("|---:|---:|---:|---:|");
        for (int batch : new int[] {1, 100, 1000}) {
            // fsync per record is slow: fewer records keep that cell short without changing its
            // rate.
            List<VectorRecord> slice =
                    batch == 1 ? data.subList(0, Math.min(records, 2_000)) : data;
            double[] aes = new double[repeats];
            double[] plain = new double[repeats];
            for (int r = 0; r < repeats; r++) {
                boolean aesFirst = r % 2 == 0;
                double first =
                        run(base, slice, batch, aesFirst ? RecordSealer.AES_GCM : PASS_THROUGH);
                double second =
                        run(base, slice, batch, aesFirst ? PASS_THROUGH : RecordSealer.AES_GCM);
                aes[r] = aesFirst ? first : second;
                plain[r] = aesFirst ? second : first;
            }
            double a = median(aes);
            double p = median(plain);
            System.out.printf(
                    Locale.ROOT, "| %d | %.0f | %.0f | %.1f%% |%n", batch, a, p, 100 * (1 - a / p));
        }
    }

    /** Records per second for one fresh store. */
    static double run(Path base, List<VectorRecord> data, int batch, RecordSealer sealer)
            throws IOException {
        Path dir = Files.createTempDirectory(base, "nepenthe-ingest");
        try {
            byte[] mk = new byte[32];
            new SplittableRandom(1).nextBytes(mk);
            MasterKey master = MasterKey.of(mk);
            try (Keystore ks = Keystore.open(dir.resolve("keys"), master);
                    TombstoneJournal journal =
                            TombstoneJournal.open(dir.resolve("keys/tombstones"))) {
                StoreContext ctx =
                        new StoreContext(
                                ks,
                                new KeyedHash(master),
                                journal,
                                sealer,
                                Durability.SYNC,
                                64L << 20,
                                256,
                                new StorageFault(), // a latch of its own: no store around it
                                new TestPoints());
                long t0 = System.nanoTime();
                try (CollectionStorage s =
                        CollectionStorage.open(
                                dir.resolve("data"), "bench", ctx, (o, seq, r) -> {})) {
                    for (int start = 0; start < data.size(); start += batch) {
                        List<Placed> placed = new ArrayList<>(batch);
                        for (int i = start; i < Math.min(data.size(), start + batch); i++) {
                            placed.add(new Placed(i, data.get(i)));
                        }
                        s.put(placed, List.of());
                        s.publishIds(placed);
                    }
                }
                return data.size() / ((System.nanoTime() - t0) / 1e9);
            }
        } finally {
            try (Stream<Path> files = Files.walk(dir)) {
                for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
                    Files.delete(p);
                }
            }
        }
    }

    static List<VectorRecord> records(int n, int dim) {
        SplittableRandom rnd = new SplittableRandom(42);
        List<VectorRecord> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            float[] v = new float[dim];
            for (int j = 0; j < dim; j++) {
                v[j] = (float) (rnd.nextDouble() * 2 - 1);
            }
            StringBuilder text = new StringBuilder();
            while (text.length() < 200) {
                text.append("note ").append(rnd.nextInt(100_000)).append(' ');
            }
            out.add(
                    VectorRecord.builder("rec-" + i)
                            .tenant("t" + (i % 4))
                            .subject("subject-" + rnd.nextInt(1000))
                            .vector(v)
                            .text(text.toString())
                            .metadata("lang", "en")
                            .metadata("n", i)
                            .metadata("score", rnd.nextDouble())
                            .build());
        }
        return out;
    }

    static double median(double[] xs) {
        double[] s = xs.clone();
        Arrays.sort(s);
        return s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
    }
}
