package dev.nepenthe.core.internal.forget;

import dev.nepenthe.core.CorruptFileException;
import dev.nepenthe.core.internal.crypto.DataKey;
import dev.nepenthe.core.internal.crypto.Keystore;
import dev.nepenthe.core.internal.crypto.RecordCipher;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import javax.crypto.AEADBadTagException;

/**
 * Where forget operations, legal holds and re-admissions are kept: the operation log (public parts,
 * holds and re-admissions, fsynced) and, for each unsealed operation, its private part sealed under
 * a key of its own in the keystore. Sealing an operation destroys that key, so its scope and probe
 * vectors become unreadable wherever a copy of the log went.
 */
final class OperationStore {

    private final OperationLog log;
    private final Keystore keystore;
    private final ScopeHashes hashes;

    OperationStore(OperationLog log, Keystore keystore, ScopeHashes hashes) {
        this.log = log;
        this.keystore = keystore;
        this.hashes = hashes;
    }

    OperationLog log() {
        return log;
    }

    /** Every operation as stored, by id. */
    Map<String, OperationLog.Stored> operations() {
        return log.operations();
    }

    /** Writes the public part, and the private part sealed under the operation's key when asked. */
    void save(LiveOperation op, boolean withSecret) throws IOException {
        log.save(op.pub, withSecret ? seal(op) : null);
    }

    /** Writes several operations' public parts (and private parts, when asked) with one fsync. */
    void saveAll(List<LiveOperation> ops, boolean withSecret) throws IOException {
        List<OperationLog.Public> pubs = new ArrayList<>(ops.size());
        List<byte[]> sealed = new ArrayList<>(ops.size());
        for (LiveOperation op : ops) {
            pubs.add(op.pub);
            sealed.add(withSecret ? seal(op) : null);
        }
        log.saveAll(pubs, sealed);
    }

    /** Records that the operation's private part is gone for good (its key is destroyed). */
    void saveDestroyed(LiveOperation op) throws IOException {
        log.save(op.pub, OperationLog.DESTROYED);
    }

    /** Destroys the operation's own key: its sealed private part becomes unreadable. */
    void destroyKey(String operationId) throws IOException {
        keystore.destroy(hashes.operationKey(operationId));
    }

    Map<String, OperationLog.StoredHold> holds() {
        return log.holds();
    }

    void saveHold(OperationLog.StoredHold hold) throws IOException {
        log.saveHold(hold);
    }

    Map<String, OperationLog.StoredReadmission> readmissions() {
        return log.readmissions();
    }

    void saveReadmission(OperationLog.StoredReadmission r) throws IOException {
        log.saveReadmission(r);
    }

    private byte[] seal(LiveOperation op) throws IOException {
        DataKey key = keystore.getOrCreate(hashes.operationKey(op.pub.id));
        byte[] plain = op.secret.encode();
        try {
            return RecordCipher.seal(key, op.pub.id.getBytes(StandardCharsets.UTF_8), plain);
        } finally {
            Arrays.fill(plain, (byte) 0);
        }
    }

    /** The private part of an operation, or null when its key is gone. */
    OperationSecret openSecret(String id, byte[] sealed) throws IOException {
        DataKey key = keystore.find(hashes.operationKey(id));
        if (key == null) {
            return null;
        }
        byte[] plain = null;
        try {
            plain = RecordCipher.open(key, id.getBytes(StandardCharsets.UTF_8), sealed);
            return OperationSecret.decode(plain);
        } catch (AEADBadTagException e) {
            throw new CorruptFileException(
                    keystore.file(),
                    "forget operation "
                            + id
                            + ": its private part does not"
                            + " decrypt (changed bytes, or another master key)",
                    e);
        } finally {
            if (plain != null) {
                Arrays.fill(plain, (byte) 0);
            }
        }
    }

    /**
     * The failure to throw for an unfinished operation whose key is missing: a {@link
     * CorruptFileException} naming the keystore.
     */
    CorruptFileException missingSecret(LiveOperation op) {
        return new CorruptFileException(
                keystore.file(),
                "forget operation "
                        + op.pub.id
                        + " is unfinished ("
                        + op.pub.state
                        + ") but its private part cannot be read (its key is missing)");
    }
}
