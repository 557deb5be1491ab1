package dev.nepenthe.cluster.cli;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HashMap;
import java.util.HexFormat;
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

    private static final String GENESIS = "0".repeat(64);

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
        String text = Files.readString(ledger, StandardCharsets.UTF_8);
        int end = text.lastIndexOf('\n');
        Map<String, String> node = new HashMap<>();
        Map<String, String> store = new HashMap<>();
        if (end < 0) {
            return new LedgerKeys(node, store, 0);
        }
        String[] lines = text.substring(0, end).split("\n", -1);
        String head = GENESIS;
        for (int i = 0; i < lines.length; i++) {
            JsonObject o;
            try {
                o = JsonParser.parseString(lines[i]).getAsJsonObject();
            } catch (RuntimeException e) {
                throw new IOException(
                        ledger + ": line " + (i + 1) + ": expected a JSON object, got other text");
            }
            String prev = o.has("prev") ? o.get("prev").getAsString() : "";
            if (!prev.equals(head)) {
                throw new IOException(
                        ledger
                                + ": line "
                                + (i + 1)
                                + ": expected prev "
                                + head
                                + ", got "
                                + prev
                                + " (a line was changed, removed or reordered)");
            }
            if (o.has("kind") && o.get("kind").getAsString().equals("NODE_JOINED")) {
                node.put(o.get("node").getAsString(), o.get("nodeKey").getAsString());
                store.put(o.get("node").getAsString(), o.get("storeKey").getAsString());
            }
            head = sha256(lines[i]);
        }
        return new LedgerKeys(node, store, lines.length);
    }

    private static String sha256(String line) {
        try {
            return HexFormat.of()
                    .formatHex(
                            MessageDigest.getInstance("SHA-256")
                                    .digest(line.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("this JDK has no SHA-256", e);
        }
    }
}
