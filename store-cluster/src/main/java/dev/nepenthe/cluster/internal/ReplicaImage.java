package dev.nepenthe.cluster.internal;

import dev.nepenthe.core.Nepenthe;
import dev.nepenthe.core.ReplicaCopy;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.apache.ratis.server.protocol.TermIndex;

/**
 * What a replica sends another that must catch up by a copy: the (term, index) of the last log
 * entry the copy holds, the group's state as applied through it (open forgets, the ledger of keys
 * and sealed forgets), then the store's own image ({@link ReplicaCopy}). Taken while the state
 * machine applies nothing, so the three agree.
 */
final class ReplicaImage {

    private static final int MAGIC = 0x4e505249; // "NPRI"
    private static final int VERSION = 1;

    /** The cluster files a copy carries; the rest of {@code cluster/} is the replica's own. */
    static final Set<String> CLUSTER_FILES = Set.of("state.json", "ledger.jsonl");

    private static final int MAX_CLUSTER_FILE = 256 << 20;

    private ReplicaImage() {}

    /**
     * Writes an image; the caller holds the state machine's apply lock.
     *
     * @param applied the last entry applied
     * @param clusterDir the replica's cluster folder (only {@link #CLUSTER_FILES} are read)
     */
    static void write(TermIndex applied, Path clusterDir, Nepenthe store, OutputStream out)
            throws IOException {
        DataOutputStream d = new DataOutputStream(out);
        d.writeInt(MAGIC);
        d.writeInt(VERSION);
        d.writeLong(applied.getTerm());
        d.writeLong(applied.getIndex());
        Map<String, byte[]> files = new TreeMap<>();
        for (String name : CLUSTER_FILES) {
            Path f = clusterDir.resolve(name);
            if (Files.exists(f)) {
                files.put(name, Files.readAllBytes(f));
            }
        }
        d.writeInt(files.size());
        for (var e : files.entrySet()) {
            d.writeUTF(e.getKey());
            d.writeInt(e.getValue().length);
            d.write(e.getValue());
        }
        d.flush();
        ReplicaCopy.write(store, out);
        out.flush();
    }

    /**
     * Reads an image into {@code staging} ({@code cluster/}, {@code store/}, {@code store.keys/});
     * the folder must not exist.
     *
     * @return the (term, index) the image holds
     * @throws IOException naming what was expected and what arrived, when the image is not one
     */
    static TermIndex read(InputStream in, Path staging) throws IOException {
        if (Files.exists(staging)) {
            throw new IllegalArgumentException(
                    "staging folder " + staging + ": expected none, got one that exists");
        }
        DataInputStream d = new DataInputStream(in);
        try {
            int magic = d.readInt();
            if (magic != MAGIC) {
                throw new IOException(
                        "replica image: expected magic "
                                + Integer.toHexString(MAGIC)
                                + ", got "
                                + Integer.toHexString(magic));
            }
            int version = d.readInt();
            if (version != VERSION) {
                throw new IOException(
                        "replica image: expected version " + VERSION + ", got " + version);
            }
            long term = d.readLong();
            long index = d.readLong();
            if (term < 0 || index < 0) {
                throw new IOException(
                        "replica image: expected a term and an index >= 0, got "
                                + term
                                + " and "
                                + index);
            }
            int n = d.readInt();
            if (n < 0 || n > CLUSTER_FILES.size()) {
                throw new IOException(
                        "replica image: expected at most "
                                + CLUSTER_FILES.size()
                                + " cluster files, got "
                                + n);
            }
            Path cluster = staging.resolve("cluster");
            Files.createDirectories(cluster);
            for (int i = 0; i < n; i++) {
                String name = d.readUTF();
                if (!CLUSTER_FILES.contains(name)) {
                    throw new IOException(
                            "replica image: expected a cluster file among "
                                    + CLUSTER_FILES
                                    + ", got one named otherwise ("
                                    + name.length()
                                    + " characters)");
                }
                int length = d.readInt();
                if (length < 0 || length > MAX_CLUSTER_FILE) {
                    throw new IOException(
                            "replica image: expected a length of 0 to "
                                    + MAX_CLUSTER_FILE
                                    + " for "
                                    + name
                                    + ", got "
                                    + length);
                }
                byte[] bytes = d.readNBytes(length);
                if (bytes.length != length) {
                    throw new EOFException(
                            "replica image: expected "
                                    + length
                                    + " bytes of "
                                    + name
                                    + ", got "
                                    + bytes.length);
                }
                Path f = cluster.resolve(name);
                Files.write(f, bytes);
                Durable.force(f);
            }
            Durable.forceDirectory(cluster);
            ReplicaCopy.read(in, staging.resolve("store"), staging.resolve("store.keys"));
            Durable.forceDirectory(staging);
            return TermIndex.valueOf(term, index);
        } catch (EOFException e) {
            throw new IOException(
                    "replica image: expected more bytes, got the end of the stream", e);
        }
    }
}
