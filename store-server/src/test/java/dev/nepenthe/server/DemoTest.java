package dev.nepenthe.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nepenthe.core.SearchHit;
import dev.nepenthe.embed.MiniLmEmbedder;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Runs the README's demo with the real model and checks every claim it prints. */
class DemoTest {

    @Test
    void demoFindsTheHikerThenForgetsHerEvenInAnOldSnapshot(@TempDir Path tmp) throws Exception {
        Path dir = tmp.resolve("demo");
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        MiniLmEmbedder embedder = new MiniLmEmbedder();
        Demo.Outcome o =
                new Demo(dir, embedder, "exact", new PrintStream(buf, true, StandardCharsets.UTF_8))
                        .run();
        int total = Demo.loadCorpus().size();
        long alice = Demo.loadCorpus().stream().filter(m -> m.subject().equals("alice")).count();
        assertEquals(total, o.loaded());
        // The real model ranks Alice's Dolomites note first for the hiking question.
        assertEquals("alice", o.before().get(0).record().subject());
        assertTrue(o.before().get(0).record().text().contains("Dolomites"));
        assertEquals(alice, o.deleted());
        assertEquals(dev.nepenthe.core.forget.OperationState.SEALED, o.state());
        assertTrue(o.receiptVerified());
        assertEquals(alice, o.snapshotPurged(), "the registered snapshot lost her records too");
        assertEquals(0, o.plaintextBefore(), "records are encrypted from the first write");
        assertEquals(0, o.plaintextAfter());
        assertTrue(o.integrityClean());
        for (SearchHit h : o.after()) {
            assertFalse(
                    h.record().subject().equals("alice"), "a deleted subject came back in results");
        }
        assertEquals(
                total - alice, o.restored(), "the restored snapshot serves everyone but alice");
        assertEquals(
                0, o.droppedOnRestore(), "nothing of hers is left in the purged snapshot to drop");
        assertEquals(0, o.restoredOfForgotten());
        String printed = buf.toString(StandardCharsets.UTF_8);
        assertTrue(printed.contains("SEALED after"), printed);
        assertTrue(printed.contains(alice + " records removed"), printed);

        // The receipt and key the demo leaves behind verify offline; a changed receipt does not.
        Path receipt = dir.resolve("receipt-alice.txt");
        Path pem = dir.resolve("store-public-key.pem");
        assertEquals(0, cli("verify-receipt", receipt, pem));
        Path forged = tmp.resolve("forged.txt");
        Files.writeString(
                forged, Files.readString(receipt).replace("\"records\":" + alice, "\"records\":0"));
        assertEquals(1, cli("verify-receipt", forged, pem));
        Path ledger = dir.resolve("keys/evidence/ledger.bin");
        assertEquals(0, cli("verify-ledger", ledger, pem, receipt));
        // The same receipt against the ledger with its last entry cut off: the receipt's entry is
        // gone.
        byte[] bytes = Files.readAllBytes(ledger);
        Path cut = tmp.resolve("cut-ledger.bin");
        Files.write(cut, java.util.Arrays.copyOf(bytes, lastEntryStart(bytes)));
        assertEquals(0, cli("verify-ledger", cut, pem), "the shorter chain verifies on its own");
        assertEquals(1, cli("verify-ledger", cut, pem, receipt), "but not with the receipt");
        assertEquals(
                3,
                cli("verify-ledger", tmp.resolve("no-such-ledger.bin"), pem),
                "could not check: status 3");
        assertEquals(2, cli("verify-ledger", cut), "misuse: status 2");

        // Control for the scan: a planted plaintext copy of a note is found.
        String note =
                Demo.loadCorpus().stream()
                        .filter(m -> m.subject().equals("alice"))
                        .findFirst()
                        .orElseThrow()
                        .text();
        Files.writeString(dir.resolve("planted.txt"), note);
        assertEquals(
                1,
                dev.nepenthe.core.internal.io.ForensicScan.filesContaining(
                                java.util.List.of(dir),
                                java.util.List.of(note.getBytes(StandardCharsets.UTF_8)))
                        .size());

        // Running again on its own folder starts fresh and gives the same outcome.
        Demo.Outcome again =
                new Demo(dir, embedder, "exact", new PrintStream(new ByteArrayOutputStream()))
                        .run();
        assertEquals(o.loaded(), again.loaded());
        assertEquals(alice, again.deleted());
        assertEquals(total - alice, again.restored());

        // A folder the demo did not make is never wiped.
        Path foreign = tmp.resolve("precious");
        Files.createDirectories(foreign);
        Files.writeString(foreign.resolve("thesis.txt"), "do not delete");
        IllegalArgumentException e =
                assertThrows(
                        IllegalArgumentException.class,
                        () ->
                                new Demo(
                                                foreign,
                                                embedder,
                                                "exact",
                                                new PrintStream(new ByteArrayOutputStream()))
                                        .run());
        assertTrue(e.getMessage().contains("was not made by the demo"), e.getMessage());
        assertTrue(Files.exists(foreign.resolve("thesis.txt")));
    }

    /**
     * Offset of the last entry of a ledger file (entries are framed by a 4-byte length and a 4-byte
     * CRC).
     */
    private static int lastEntryStart(byte[] ledger) {
        java.nio.ByteBuffer b = java.nio.ByteBuffer.wrap(ledger);
        int headerLength = 4 + 2 + b.getShort(4) + 4;
        int pos = headerLength;
        int last = -1;
        while (pos < ledger.length) {
            last = pos;
            pos += 8 + b.getInt(pos);
        }
        return last;
    }

    /** Runs the real command line (as the launcher does) and returns its exit status. */
    private static int cli(String command, Object... args) {
        String[] argv = new String[args.length + 1];
        argv[0] = command;
        for (int i = 0; i < args.length; i++) {
            argv[i + 1] = args[i].toString();
        }
        return Main.commandLine().execute(argv);
    }
}
