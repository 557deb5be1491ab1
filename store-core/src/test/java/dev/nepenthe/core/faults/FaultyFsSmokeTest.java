package dev.nepenthe.core.faults;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.nepenthe.core.*;
import dev.nepenthe.core.forget.*;
import dev.nepenthe.testing.faults.FaultPlan;
import dev.nepenthe.testing.faults.FaultyFileSystem;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FaultyFsSmokeTest {
    @TempDir Path tmp;

    @Test
    void storeRunsOnTheFaultyFileSystemWithNoFaults() throws Exception {
        FaultPlan plan = FaultPlan.none(1);
        Path data = FaultyFileSystem.wrap(tmp.resolve("data"), plan);
        try (Nepenthe store = Nepenthe.open(data, StoreOptions.defaults().withCheckpointBytes(1 << 16))) {
            VectorCollection c = store.createCollection(CollectionSpec.of("c", 4, Metric.L2).withTextIndex("whitespace"));
            for (int i = 0; i < 50; i++) {
                c.upsert(VectorRecord.builder("r" + i).subject("s" + (i % 5)).vector(new float[] {i, 1, 2, 3}).text("word" + i).build());
            }
            ForgetOperation op = store.forget(new ForgetRequest(VectorRecord.DEFAULT_TENANT, ForgetScope.subject("s1"), "req-1", "test", null));
            op = store.awaitOperation(op.id(), Duration.ofMinutes(1));
            System.out.println(op.state());
            store.snapshot(tmp.resolve("snap").getFileSystem() == data.getFileSystem() ? tmp.resolve("snap") : data.resolveSibling("snap"));
        }
        try (Nepenthe store = Nepenthe.open(data)) {
            assertEquals(40, store.collection("c").size());
        }
    }
}
