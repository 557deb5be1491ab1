package dev.nepenthe.core;

import dev.nepenthe.core.audit.LedgerHead;
import dev.nepenthe.core.embed.Embedder;
import dev.nepenthe.core.forget.ProbePolicy;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * How a store is opened.
 *
 * @param keystore folder of the keystore and the tombstone journal; null means the sibling folder
 *     {@code <data folder>.keys}. It must not be inside the data folder: snapshots copy the data
 *     folder, and a key that travels with the data protects nothing.
 * @param masterKeyFile where the master key is read (or generated, when {@code generateMasterKey});
 *     null means {@code master.key} in the keystore folder. The environment variable {@code
 *     NEPENTHE_MASTER_KEY} takes precedence over the file.
 * @param generateMasterKey whether a missing master key file is generated (the embedded default);
 *     false makes {@link Nepenthe#open} fail when neither the variable nor the file holds a key
 * @param durability when writes are acknowledged (default: after fsync, with group commit)
 * @param checkpointBytes write-ahead log size that triggers a checkpoint into segments; larger
 *     values mean fewer, larger segment rewrites and a longer replay after a crash
 * @param shardBuckets subjects are hashed into this many buckets; each bucket is one segment file,
 *     rewritten whole when one of its subjects is deleted (cost ~ records / buckets)
 * @param forgetWorkerNice the OS priority (Linux nice value, 0 to 19) the forget worker lowers
 *     itself to, so that searches come first when the cores are busy; 0 keeps normal priority.
 *     Default 10. The mark ({@code forget} returning, reads blocked) runs on the caller's thread
 *     and is never slowed by it; only the time to SEALED is, and only under contention.
 * @param probePolicy the forget verification probe's threshold, which requests may tighten but not
 *     loosen (default {@link ProbePolicy#DEFAULT})
 * @param ledgerWitness a head of the evidence ledger recorded outside the store (see {@link
 *     Nepenthe#ledgerHead()}), or null. When set, the store refuses to open unless its ledger still
 *     holds that head: a keystore folder restored from a copy older than the witness has lost the
 *     forgets recorded since, and would serve what they erased.
 * @param embedders the embedders collections may name, by {@link Embedder#name()} (none by
 *     default): a collection created with an embedder accepts records with text and no vector, and
 *     text queries, only in a store opened with that embedder
 */
public record StoreOptions(
        Path keystore,
        Path masterKeyFile,
        boolean generateMasterKey,
        Durability durability,
        long checkpointBytes,
        int shardBuckets,
        int forgetWorkerNice,
        ProbePolicy probePolicy,
        LedgerHead ledgerWitness,
        Map<String, Embedder> embedders) {

    /** Most shard buckets a store may have. */
    public static final int MAX_BUCKETS = 4096;

    /**
     * Checks the options.
     *
     * @throws IllegalArgumentException if {@code checkpointBytes} is below 65536, {@code
     *     shardBuckets} outside 1 to {@value #MAX_BUCKETS} or {@code forgetWorkerNice} outside 0 to
     *     19
     * @throws NullPointerException if the durability or the probe policy is null
     */
    public StoreOptions {
        Objects.requireNonNull(durability, "durability");
        Objects.requireNonNull(probePolicy, "probePolicy");
        embedders = embedders == null ? Map.of() : Map.copyOf(embedders);
        if (checkpointBytes < 1 << 16) {
            throw new IllegalArgumentException(
                    "checkpointBytes: expected >= 65536, got " + checkpointBytes);
        }
        if (shardBuckets < 1 || shardBuckets > MAX_BUCKETS) {
            throw new IllegalArgumentException(
                    "shardBuckets: expected 1 to " + MAX_BUCKETS + ", got " + shardBuckets);
        }
        if (forgetWorkerNice < 0 || forgetWorkerNice > 19) {
            throw new IllegalArgumentException(
                    "forgetWorkerNice: expected 0 to 19, got " + forgetWorkerNice);
        }
    }

    /**
     * The embedded default: sibling keystore, generated master key, fsync before ack, 64 MiB
     * checkpoints, 256 shard buckets, forget worker at nice 10, {@link ProbePolicy#DEFAULT}, no
     * ledger witness.
     *
     * @return the default options
     */
    public static StoreOptions defaults() {
        return new StoreOptions(
                null,
                null,
                true,
                Durability.SYNC,
                64L << 20,
                256,
                10,
                ProbePolicy.DEFAULT,
                null,
                Map.of());
    }

    /**
     * These options with another keystore folder.
     *
     * @param folder the keystore folder (outside the data folder), or null for the sibling default
     * @return new options
     */
    public StoreOptions withKeystore(Path folder) {
        return with(o -> o.keystore = folder);
    }

    /**
     * These options with another master key file.
     *
     * @param file where the master key is read, or null for {@code master.key} in the keystore
     *     folder
     * @param generateIfMissing whether a missing file is generated rather than refused
     * @return new options
     */
    public StoreOptions withMasterKeyFile(Path file, boolean generateIfMissing) {
        return with(
                o -> {
                    o.masterKeyFile = file;
                    o.generateMasterKey = generateIfMissing;
                });
    }

    /**
     * These options with another durability.
     *
     * @param d when writes are acknowledged
     * @return new options
     * @throws NullPointerException if {@code d} is null
     */
    public StoreOptions withDurability(Durability d) {
        return with(o -> o.durability = d);
    }

    /**
     * These options with another checkpoint size.
     *
     * @param bytes write-ahead log size that triggers a checkpoint, at least 65536
     * @return new options
     * @throws IllegalArgumentException if {@code bytes} is below 65536
     */
    public StoreOptions withCheckpointBytes(long bytes) {
        return with(o -> o.checkpointBytes = bytes);
    }

    /**
     * These options with another number of shard buckets. A collection keeps the count its manifest
     * records, so this applies to collections that have no manifest yet.
     *
     * @param buckets 1 to {@value #MAX_BUCKETS}
     * @return new options
     * @throws IllegalArgumentException if {@code buckets} is out of range
     */
    public StoreOptions withShardBuckets(int buckets) {
        return with(o -> o.shardBuckets = buckets);
    }

    /**
     * The forget worker's OS priority, 0 (normal) to 19 (lowest); see the record's parameters.
     *
     * @param nice the Linux nice value the worker lowers itself to
     * @return new options
     * @throws IllegalArgumentException if {@code nice} is outside 0 to 19
     */
    public StoreOptions withForgetWorkerNice(int nice) {
        return with(o -> o.forgetWorkerNice = nice);
    }

    /**
     * The forget probe's policy: its threshold and the lowest a request may tighten it to.
     *
     * @param policy the policy
     * @return new options
     * @throws NullPointerException if {@code policy} is null
     */
    public StoreOptions withProbePolicy(ProbePolicy policy) {
        return with(o -> o.probePolicy = policy);
    }

    /**
     * Refuse to open unless the evidence ledger still holds this head (see the record's
     * parameters).
     *
     * @param head the witnessed head, or null to open without a witness
     * @return new options
     */
    public StoreOptions withLedgerWitness(LedgerHead head) {
        return with(o -> o.ledgerWitness = head);
    }

    /**
     * These options with one more embedder, which collections name by {@link Embedder#name()}. The
     * store calls it from several threads at once.
     *
     * @param embedder the embedder; one of the same name replaces it
     * @return new options
     */
    public StoreOptions withEmbedder(Embedder embedder) {
        Objects.requireNonNull(embedder, "embedder");
        Map<String, Embedder> more = new HashMap<>(embedders);
        more.put(embedder.name(), embedder);
        return with(o -> o.embedders = more);
    }

    /** A copy of these options with {@code change} made: the one place the withers list them. */
    private StoreOptions with(Consumer<Copy> change) {
        Copy o = new Copy(this);
        change.accept(o);
        return new StoreOptions(
                o.keystore,
                o.masterKeyFile,
                o.generateMasterKey,
                o.durability,
                o.checkpointBytes,
                o.shardBuckets,
                o.forgetWorkerNice,
                o.probePolicy,
                o.ledgerWitness,
                o.embedders);
    }

    /** The components of a copy being made, changed by a wither before the copy is checked. */
    private static final class Copy {
        Path keystore;
        Path masterKeyFile;
        boolean generateMasterKey;
        Durability durability;
        long checkpointBytes;
        int shardBuckets;
        int forgetWorkerNice;
        ProbePolicy probePolicy;
        LedgerHead ledgerWitness;
        Map<String, Embedder> embedders;

        Copy(StoreOptions from) {
            keystore = from.keystore;
            masterKeyFile = from.masterKeyFile;
            generateMasterKey = from.generateMasterKey;
            durability = from.durability;
            checkpointBytes = from.checkpointBytes;
            shardBuckets = from.shardBuckets;
            forgetWorkerNice = from.forgetWorkerNice;
            probePolicy = from.probePolicy;
            ledgerWitness = from.ledgerWitness;
            embedders = from.embedders;
        }
    }

    Path keystoreFor(Path dataFolder) {
        Path abs = dataFolder.toAbsolutePath().normalize();
        return keystore != null
                ? keystore.toAbsolutePath().normalize()
                : abs.resolveSibling(abs.getFileName() + ".keys");
    }
}
