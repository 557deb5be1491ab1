package dev.nepenthe.cluster.cli;

import com.google.gson.JsonObject;
import dev.nepenthe.cluster.internal.LedgerLines;
import java.io.IOException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

/**
 * The node and store keys a replica's cluster ledger recorded, read as an auditor would: from the
 * file alone, without the replica (which may be running and appending), following the hash chain
 * from the first line and ignoring a last line still being written.
 *
 * @param nodeKeys member id to its node key (base64 X.509)
 * @param storeKeys member id to its store key (PEM)
 * @param lines how many whole lines the chain held
 */
public record LedgerKeys(Map<String, String> nodeKeys, Map<String, String> storeKeys, int lines) {

    /**
     * The ledger of a replica whose folder is {@code dataDir}.
     *
     * @param dataDir the replica's folder
     * @return its cluster ledger's path
     */
    public static Path ledgerOf(Path dataDir) {
        return dataDir.resolve("cluster").resolve("ledger.jsonl");
    }

    /**
     * Reads the keys of a ledger file.
     *
     * @param ledger the ledger file
     * @return the keys it recorded
     * @throws IOException if the file cannot be read, a line does not parse, or a line does not
     *     name the hash of the one before it (naming the file and the line)
     */
    public static LedgerKeys read(Path ledger) throws IOException {
        Map<String, String> node = new HashMap<>();
        Map<String, String> store = new HashMap<>();
        LedgerLines read = LedgerLines.read(ledger);
        for (JsonObject o : read.lines()) {
            if (o.has("kind") && o.get("kind").getAsString().equals("NODE_JOINED")) {
                node.put(o.get("node").getAsString(), o.get("nodeKey").getAsString());
                store.put(o.get("node").getAsString(), o.get("storeKey").getAsString());
            }
        }
        return new LedgerKeys(node, store, read.lines().size());
    }
}
