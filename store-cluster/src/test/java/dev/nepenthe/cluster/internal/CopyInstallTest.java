package dev.nepenthe.cluster.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The swap that puts a fetched copy in place of a replica's store, run again after a crash at each
 * point it can stop: it ends with the copy in place, the replica's own master key kept, and what
 * was replaced gone.
 */
final class CopyInstallTest {

    @TempDir Path data;

    private static void write(Path f, String text) throws IOException {
        Files.createDirectories(f.getParent());
        Files.writeString(f, text, StandardCharsets.UTF_8);
    }

    private static String read(Path f) throws IOException {
        return Files.readString(f, StandardCharsets.UTF_8);
    }

    /**
     * @param crashedAfter how many of the swap's moves happened before the crash: 0 none; 1 the
     *     store set aside; 2 the copy's store in place; 3 the keystore set aside; 4 the copy's
     *     keystore in place (with the key); 5 the cluster files moved
     */
    @ParameterizedTest
    @ValueSource(ints = {0, 1, 2, 3, 4, 5})
    void aSwapCutShortByACrashFinishesWhenRunAgain(int crashedAfter) throws Exception {
        write(data.resolve("store/collections/notes/seg-1"), "old records");
        write(data.resolve("store.keys/keys.db"), "old keys");
        write(data.resolve("store.keys/master.key"), "the group key");
        write(data.resolve("cluster/state.json"), "old state");
        write(data.resolve("cluster/ledger.jsonl"), "old ledger");
        write(data.resolve("cluster/node.key"), "this node's own key");
        Path in = data.resolve("incoming");
        write(in.resolve("store/collections/notes/seg-9"), "copied records");
        write(in.resolve("store.keys/keys.db"), "copied keys");
        write(in.resolve("cluster/state.json"), "copied state");
        write(in.resolve("cluster/ledger.jsonl"), "copied ledger");
        Files.writeString(CopyInstall.pending(data), "3 120\n");

        // What the swap had done when the process died.
        if (crashedAfter >= 1) {
            Files.move(data.resolve("store"), data.resolve("store.replaced"));
        }
        if (crashedAfter >= 2) {
            Files.move(in.resolve("store"), data.resolve("store"));
        }
        if (crashedAfter >= 3) {
            Files.move(data.resolve("store.keys"), data.resolve("store.keys.replaced"));
        }
        if (crashedAfter >= 4) {
            Files.copy(
                    data.resolve("store.keys.replaced/master.key"),
                    in.resolve("store.keys/master.key"));
            Files.move(in.resolve("store.keys"), data.resolve("store.keys"));
        }
        if (crashedAfter >= 5) {
            for (String f : new String[] {"state.json", "ledger.jsonl"}) {
                Files.move(
                        in.resolve("cluster").resolve(f),
                        data.resolve("cluster").resolve(f),
                        StandardCopyOption.REPLACE_EXISTING);
            }
        }

        assertThat(CopyInstall.pendingIndex(data).getIndex()).isEqualTo(120);
        CopyInstall.swap(data);
        CopyInstall.finish(data);

        assertThat(read(data.resolve("store/collections/notes/seg-9"))).isEqualTo("copied records");
        assertThat(data.resolve("store/collections/notes/seg-1")).doesNotExist();
        assertThat(read(data.resolve("store.keys/keys.db"))).isEqualTo("copied keys");
        assertThat(read(data.resolve("store.keys/master.key"))).isEqualTo("the group key");
        assertThat(read(data.resolve("cluster/state.json"))).isEqualTo("copied state");
        assertThat(read(data.resolve("cluster/ledger.jsonl"))).isEqualTo("copied ledger");
        assertThat(read(data.resolve("cluster/node.key"))).isEqualTo("this node's own key");
        assertThat(data.resolve("store.replaced")).doesNotExist();
        assertThat(data.resolve("store.keys.replaced")).doesNotExist();
        assertThat(in).doesNotExist();
        assertThat(CopyInstall.pending(data)).doesNotExist();
        assertThat(CopyInstall.pendingIndex(data)).isNull();
    }
}
