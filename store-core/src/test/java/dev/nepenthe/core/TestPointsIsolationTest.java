package dev.nepenthe.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nepenthe.core.forget.ForgetRequest;
import dev.nepenthe.core.forget.ForgetScope;
import dev.nepenthe.core.forget.OperationState;
import dev.nepenthe.core.internal.forget.ForgetCrash;
import dev.nepenthe.core.internal.io.TestPoints;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Test points belong to one store: hooks set on one store (crash points, a forget stop, a search
 * pause) fire for its own writes, forgets and searches and never for another store open in the same
 * JVM, so tests running in parallel cannot trip each other.
 */
class TestPointsIsolationTest {

    private static final Duration WAIT = Duration.ofSeconds(60);

    @TempDir Path tmp;

    private Nepenthe open(String name) throws IOException {
        return Nepenthe.open(
                tmp.resolve(name), StoreOptions.defaults().withKeystore(tmp.resolve(name + ".k")));
    }

    private static VectorCollection populate(Nepenthe store) {
        VectorCollection c = store.createCollection(CollectionSpec.of("c", 4, Metric.L2));
        for (int i = 0; i < 6; i++) {
            c.upsert(
                    VectorRecord.builder("r" + i)
                            .subject(i % 2 == 0 ? "alice" : "bob")
                            // Alice's and Bob's vectors orthogonal: the forget's probe finds
                            // no near copy of hers among his.
                            .vector(
                                    i % 2 == 0
                                            ? new float[] {1, 0.1f * i, 0, 0}
                                            : new float[] {0, 0, 1, 0.1f * i})
                            .build());
        }
        return c;
    }

    private static ForgetRequest forgetAlice(String key) {
        return ForgetRequest.of(ForgetScope.subject("alice"), key, "gdpr-art17");
    }

    @Test
    void hooksSetOnOneStoreNeverFireForAnother() throws Exception {
        try (Nepenthe armed = open("armed");
                Nepenthe other = open("other")) {
            List<String> crashPoints = new CopyOnWriteArrayList<>();
            AtomicInteger pauses = new AtomicInteger();
            TestPoints points = armed.testPoints();
            points.installCrashHook(crashPoints::add);
            points.afterIndexSearch(pauses::incrementAndGet);
            points.stopForgetAt("after-mark");
            assertTrue(points == TestPoints.of(armed), "the lookup finds the store's own points");
            assertTrue(other.testPoints() != points, "each store has points of its own");

            // The other store writes, searches and forgets: none of the armed hooks fires.
            VectorCollection c = populate(other);
            assertEquals(3, c.search(SearchRequest.of(new float[] {0, 1, 0, 0}, 3)).size());
            String op = other.forget(forgetAlice("req-other")).id();
            assertEquals(OperationState.SEALED, other.awaitOperation(op, WAIT).state());
            assertEquals(List.of(), crashPoints, "crash points of the other store");
            assertEquals(0, pauses.get(), "search pauses of the other store");
            assertEquals(3, c.size());

            // Control: the armed store's own writes, searches and forgets do fire them.
            VectorCollection a = populate(armed);
            assertTrue(
                    crashPoints.contains("keystore.slot-written"),
                    "its own writes: " + crashPoints);
            a.search(SearchRequest.of(new float[] {0, 1, 0, 0}, 3));
            assertEquals(1, pauses.get(), "its own search paused once");
            assertThrows(ForgetCrash.Simulated.class, () -> armed.forget(forgetAlice("req-a")));
        }
    }
}
