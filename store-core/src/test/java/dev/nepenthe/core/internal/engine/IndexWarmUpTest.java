package dev.nepenthe.core.internal.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nepenthe.core.CollectionSpec;
import dev.nepenthe.core.IndexSpec;
import dev.nepenthe.core.Metric;
import dev.nepenthe.core.index.Accept;
import dev.nepenthe.core.index.IntegrityReport;
import dev.nepenthe.core.index.SearchParams;
import dev.nepenthe.core.index.SearchResult;
import dev.nepenthe.core.index.VectorIndex;
import dev.nepenthe.core.internal.index.ExactIndex;
import java.lang.reflect.Proxy;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The warm-up makes a forget's index calls on a throwaway index, and only for large collections.
 */
class IndexWarmUpTest {

    @Test
    void makesTheForgetsCallsAndItsFilteredSearchesNeverReturnWhatItRemoved() {
        Set<Integer> removed = new HashSet<>();
        AtomicInteger filteredSearches = new AtomicInteger();
        AtomicInteger probeSearches = new AtomicInteger();
        AtomicInteger returnedRemoved = new AtomicInteger();
        AtomicInteger checks = new AtomicInteger();
        AtomicInteger closed = new AtomicInteger();
        ExactIndex exact = new ExactIndex(24, Metric.COSINE);
        VectorIndex watched =
                (VectorIndex)
                        Proxy.newProxyInstance(
                                getClass().getClassLoader(),
                                new Class<?>[] {VectorIndex.class},
                                (proxy, method, args) -> {
                                    switch (method.getName()) {
                                        case "removeAll" -> {
                                            for (int o : (int[]) args[0]) {
                                                removed.add(o);
                                            }
                                        }
                                        case "verifyRemoval" -> checks.incrementAndGet();
                                        case "close" -> closed.incrementAndGet();
                                        default -> {}
                                    }
                                    Object out = method.invoke(exact, args);
                                    if (method.getName().equals("search")
                                            && args.length == 4
                                            && args[2] != Accept.ALL) {
                                        filteredSearches.incrementAndGet();
                                        if (((SearchParams) args[3]).get("efSearch", 0) == 512) {
                                            probeSearches.incrementAndGet();
                                        }
                                        for (int o : ((SearchResult) out).ordinals()) {
                                            if (removed.contains(o)) {
                                                returnedRemoved.incrementAndGet();
                                            }
                                        }
                                    }
                                    return out;
                                });

        IntegrityReport last = IndexWarmUp.run(() -> watched, 24, 42);

        int perRound = IndexWarmUp.VECTORS / (4 * IndexWarmUp.ROUNDS);
        assertEquals(IndexWarmUp.ROUNDS * perRound, removed.size());
        assertEquals(IndexWarmUp.VECTORS - removed.size(), exact.size());
        assertEquals(IndexWarmUp.ROUNDS, checks.get());
        assertTrue(last.isClean(), last::toString);
        // One probe per removed vector, filtered to the survivors, as a forget's probe is.
        assertEquals(removed.size(), probeSearches.get());
        assertEquals(probeSearches.get(), filteredSearches.get());
        assertEquals(0, returnedRemoved.get(), "a filtered search returned a removed ordinal");
        assertEquals(1, closed.get(), "the throwaway index is closed");
    }

    @Test
    void onlyALargeCollectionIsWarmedAndEachIndexSpecOncePerJvm() throws InterruptedException {
        // A spec no other test uses, so this JVM has not warmed it.
        IndexSpec index =
                IndexSpec.of("exact", Map.of("warm-up-test", String.valueOf(System.nanoTime())));
        CollectionSpec spec = new CollectionSpec("warm", 8, Metric.L2, index);
        AtomicInteger made = new AtomicInteger();
        CountDownLatch closed = new CountDownLatch(1);
        java.util.function.Supplier<VectorIndex> factory =
                () -> {
                    made.incrementAndGet();
                    ExactIndex exact = new ExactIndex(8, Metric.L2);
                    return (VectorIndex)
                            Proxy.newProxyInstance(
                                    getClass().getClassLoader(),
                                    new Class<?>[] {VectorIndex.class},
                                    (proxy, method, args) -> {
                                        if (method.getName().equals("close")) {
                                            closed.countDown();
                                        }
                                        return method.invoke(exact, args);
                                    });
                };

        // Both refusals are decided before any thread starts, so the counts are final at return.
        IndexWarmUp.startIfWorthIt(spec, IndexWarmUp.MIN_RECORDS - 1, factory);
        assertEquals(0, made.get(), "a small collection was warmed");

        IndexWarmUp.startIfWorthIt(spec, IndexWarmUp.MIN_RECORDS, factory);
        assertTrue(closed.await(60, TimeUnit.SECONDS), "the warm-up did not finish");
        IndexWarmUp.startIfWorthIt(spec, IndexWarmUp.MIN_RECORDS, factory);
        assertEquals(1, made.get(), "the same index spec was warmed twice in one JVM");
    }
}
