package dev.nepenthe.core.internal.forget;

import dev.nepenthe.core.CorruptFileException;
import dev.nepenthe.core.internal.crypto.KeyedHash;
import dev.nepenthe.core.internal.io.ChecksummedFiles;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * What a clean close leaves in the keystore folder ({@code reconciled.stamp}) so that the next open
 * need not test every record against the sealed forgets' fences: the digest of those fences, and
 * per collection (by incarnation id) the digest of the manifest its close left.
 *
 * <p>Reconciliation finds records a restored data folder or a lost journal brought back. While the
 * store runs, none can be live: a forget seals only once its scope is gone, and the fences refuse a
 * write it names. So a collection whose open found exactly the files of the last clean close (same
 * manifest, nothing replayed from its log, nothing dropped by the journal), under the same fences,
 * holds none, and its check is skipped. Anything else checks it: a crash leaves no stamp, a
 * restored data folder has another manifest (every manifest carries a fresh file id), a lifted or
 * new fence changes the fences' digest.
 *
 * <p>The stamp lives with the keys, not the data: a data folder restored from a backup brings its
 * own manifest but not a stamp. It holds digests and random ids, nothing of anyone, and a keyed
 * hash over its content, so it cannot be written without the master key. An open takes it (reads,
 * then deletes it) before anything is served, so it vouches for one open only.
 */
final class ReconciliationStamp {

    static final String FILE = "reconciled.stamp";
    private static final String FORMAT = "nepenthe-reconciled-close";
    private static final int VERSION = 1;
    private static final System.Logger LOG = System.getLogger(ReconciliationStamp.class.getName());

    private ReconciliationStamp() {}

    /** A digest of the sealed fences and the lifted ones, independent of the maps' order. */
    static byte[] fenceDigest(
            Map<KeyedHash.Hash, String> sealed, Map<KeyedHash.Hash, WriteFences.Lifted> lifted) {
        MessageDigest d = sha256();
        TreeMap<String, String> lines = new TreeMap<>();
        HexFormat hex = HexFormat.of();
        sealed.forEach((h, op) -> lines.put("s" + hex.formatHex(h.bytes()), op));
        lifted.forEach(
                (h, l) ->
                        lines.put(
                                "l" + hex.formatHex(h.bytes()),
                                l.operation() + '\t' + new TreeMap<>(l.floors())));
        lines.forEach(
                (k, v) -> {
                    update(d, k);
                    update(d, v);
                });
        return d.digest();
    }

    /**
     * Writes the stamp after a clean close: {@code manifests} maps each collection's incarnation id
     * to the digest of the manifest its close left.
     */
    static void write(
            Path keysFolder, KeyedHash hashes, byte[] fenceDigest, Map<String, byte[]> manifests)
            throws IOException {
        TreeMap<String, byte[]> sorted = new TreeMap<>(manifests);
        byte[] mac = mac(hashes, fenceDigest, sorted);
        ChecksummedFiles.write(
                keysFolder.resolve(FILE),
                FORMAT,
                VERSION,
                ChecksummedFiles.newFileId(),
                out -> {
                    out.write(fenceDigest);
                    out.writeInt(sorted.size());
                    for (Map.Entry<String, byte[]> e : sorted.entrySet()) {
                        out.writeUTF(e.getKey());
                        out.writeShort(e.getValue().length);
                        out.write(e.getValue());
                    }
                    out.write(mac);
                });
    }

    /**
     * Reads and deletes the stamp. Returns, per collection incarnation id, the manifest digest its
     * last clean close left, when the stamp is sound and its fence digest is {@code
     * fenceDigestNow}; otherwise an empty map (every collection is then checked). A stamp that
     * fails its checksum or its keyed hash is logged, naming the file, and ignored.
     */
    static Map<String, byte[]> take(Path keysFolder, KeyedHash hashes, byte[] fenceDigestNow)
            throws IOException {
        Path file = keysFolder.resolve(FILE);
        if (!Files.exists(file)) {
            return Map.of();
        }
        TreeMap<String, byte[]> manifests = new TreeMap<>();
        byte[] fence = new byte[32];
        String problem = null;
        try {
            boolean macMatches =
                    ChecksummedFiles.read(
                            file,
                            FORMAT,
                            VERSION,
                            VERSION,
                            (in, version) -> {
                                in.readFully(fence);
                                int n = in.readInt();
                                if (n < 0 || n > 1 << 20) {
                                    throw new CorruptFileException(
                                            file,
                                            "collection count " + n + " (expected 0 to 2^20)");
                                }
                                for (int i = 0; i < n; i++) {
                                    String id = in.readUTF();
                                    byte[] digest = new byte[in.readUnsignedShort()];
                                    in.readFully(digest);
                                    manifests.put(id, digest);
                                }
                                byte[] mac = new byte[32];
                                in.readFully(mac);
                                return MessageDigest.isEqual(mac, mac(hashes, fence, manifests));
                            });
            if (!macMatches) {
                problem =
                        file
                                + ": its keyed hash does not match its content (not written by this"
                                + " store's close)";
            }
        } catch (IOException | RuntimeException e) {
            problem = e.getMessage();
        }
        // Whatever it said, it vouches for this open only.
        Files.delete(file);
        ChecksummedFiles.fsyncDirectory(keysFolder);
        if (problem != null) {
            LOG.log(
                    Level.WARNING,
                    "the clean-close stamp is ignored and every collection reconciled: {0}",
                    problem);
            return Map.of();
        }
        if (!Arrays.equals(fence, fenceDigestNow)) {
            return Map.of();
        }
        return new HashMap<>(manifests);
    }

    private static byte[] mac(
            KeyedHash hashes, byte[] fenceDigest, SortedMap<String, byte[]> manifests) {
        HexFormat hex = HexFormat.of();
        StringBuilder body = new StringBuilder(hex.formatHex(fenceDigest));
        manifests.forEach(
                (id, digest) ->
                        body.append('\n').append(id).append('\t').append(hex.formatHex(digest)));
        return hashes.of("reconciled-close", body.toString()).bytes();
    }

    private static void update(MessageDigest d, String s) {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        d.update(
                new byte[] {
                    (byte) (b.length >>> 24),
                    (byte) (b.length >>> 16),
                    (byte) (b.length >>> 8),
                    (byte) b.length
                });
        d.update(b);
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
