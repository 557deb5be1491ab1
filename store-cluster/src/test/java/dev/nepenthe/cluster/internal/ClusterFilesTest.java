package dev.nepenthe.cluster.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.gson.JsonObject;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The cluster's small files: the ledger's hash chain catches a changed, removed or reordered line
 * (naming the file and line) and drops only a line cut short by a crash; an entry applied again
 * appends nothing; the applied index survives a reopen and a flipped byte fails loudly.
 */
final class ClusterFilesTest {

    @TempDir Path dir;

    private static JsonObject fields(String node) {
        JsonObject o = new JsonObject();
        o.addProperty("node", node);
        return o;
    }

    @Test
    void theLedgerChainsItsLinesAndCatchesAChangedOne() throws IOException {
        Path file = dir.resolve("ledger.jsonl");
        ClusterLedger l = ClusterLedger.open(file);
        l.append("NODE_JOINED", 3, fields("n1"));
        l.append("NODE_JOINED", 5, fields("n2"));
        l.append("NODE_JOINED", 5, fields("n2")); // applied again after a crash: nothing
        l.append("NODE_JOINED", 4, fields("n9")); // an older index: nothing
        ClusterLedger again = ClusterLedger.open(file);
        assertThat(again.entries()).hasSize(2);
        assertThat(again.head()).isEqualTo(l.head());
        assertThat(again.lastIndex()).isEqualTo(5);

        String text = Files.readString(file, StandardCharsets.UTF_8);
        Files.writeString(file, text.replace("\"n1\"", "\"nX\""), StandardCharsets.UTF_8);
        assertThatThrownBy(() -> ClusterLedger.open(file))
                .isInstanceOf(IOException.class)
                .hasMessageContaining(file.toString())
                .hasMessageContaining("line 2")
                .hasMessageContaining("a line was changed, removed or reordered");

        List<String> lines = List.of(text.split("\n", -1));
        Files.writeString(file, lines.get(1) + "\n", StandardCharsets.UTF_8);
        assertThatThrownBy(() -> ClusterLedger.open(file))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("line 1");
    }

    @Test
    void aLineCutShortByACrashIsDroppedAndWrittenAgain() throws IOException {
        Path file = dir.resolve("ledger.jsonl");
        ClusterLedger l = ClusterLedger.open(file);
        l.append("NODE_JOINED", 3, fields("n1"));
        String head = l.head();
        Files.writeString(file, "{\"prev\":\"abc", StandardOpenOption.APPEND);
        long cut = Files.size(file);
        // An auditor's read of a live file leaves out the line being written, and writes nothing.
        LedgerLines read = LedgerLines.read(file);
        assertThat(read.lines()).hasSize(1);
        assertThat(read.head()).isEqualTo(head);
        assertThat(Files.size(file)).isEqualTo(cut);
        ClusterLedger again = ClusterLedger.open(file);
        assertThat(Files.size(file)).isLessThan(cut);
        assertThat(again.entries()).hasSize(1);
        assertThat(again.head()).isEqualTo(head);
        again.append("NODE_JOINED", 4, fields("n2"));
        assertThat(ClusterLedger.open(file).entries()).hasSize(2);
    }

    @Test
    void theAppliedIndexSurvivesAReopenAndAFlippedByteFailsLoudly() throws IOException {
        Path file = dir.resolve("applied");
        try (AppliedIndex a = AppliedIndex.open(file)) {
            assertThat(a.index()).isZero();
            a.set(2, 41);
            a.set(3, 42);
        }
        try (AppliedIndex a = AppliedIndex.open(file)) {
            assertThat(a.term()).isEqualTo(3);
            assertThat(a.index()).isEqualTo(42);
        }
        byte[] b = Files.readAllBytes(file);
        b[9] ^= 1;
        Files.write(file, b);
        assertThatThrownBy(() -> AppliedIndex.open(file))
                .isInstanceOf(IOException.class)
                .hasMessageContaining(file.toString())
                .hasMessageContaining("CRC32C");
    }

    @Test
    void theByteScanFindsPlantedBytesAndNothingElse() throws IOException {
        byte[] needle = "a forgotten vector's bytes".getBytes(StandardCharsets.UTF_8);
        Path planted = dir.resolve("planted");
        Files.write(
                planted,
                ("before " + new String(needle, StandardCharsets.UTF_8) + " after")
                        .getBytes(StandardCharsets.UTF_8));
        Path clean = dir.resolve("clean");
        Files.writeString(clean, "nothing of it here");
        assertThat(ByteScan.holds(planted, List.of(new byte[] {9, 9}, needle))).contains(1);
        assertThat(ByteScan.holds(clean, List.of(needle))).isEmpty();
        assertThat(ByteScan.holds(dir.resolve("gone"), List.of(needle))).isEmpty();
    }

    @Test
    void aCommandsHeaderIsItsKindAlone() {
        Command c = new Command(Command.Kind.ATTEST, "{\"x\":1}".getBytes(StandardCharsets.UTF_8));
        assertThat(c.header()).containsExactly(Command.Kind.ATTEST.code);
        assertThat(Command.decode(c.encode())).isEqualTo(c);
        assertThatThrownBy(() -> Command.decode(new byte[] {9, 1}))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("expected a command kind 1 to 5, got 9");
    }
}
