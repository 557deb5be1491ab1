package dev.nepenthe.core.internal.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import dev.nepenthe.core.internal.crypto.KeyedHash;
import dev.nepenthe.core.internal.engine.NoPhoneHome;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The id map holds far more records than it was created for, across a close and reopen. */
class IdMapTest {

    static {
        NoPhoneHome.apply();
    }

    @TempDir Path tmp;

    private static KeyedHash.Hash key(int i) {
        byte[] b = new byte[KeyedHash.LENGTH];
        // Spread like real keyed hashes: a multiplicative mix first, the index after it.
        ByteBuffer.wrap(b).putLong(i * 0x9E3779B97F4A7C15L).putInt(8, i);
        return new KeyedHash.Hash(b);
    }

    @Test
    void growsPastItsInitialCapacityAndKeepsEveryEntry() throws Exception {
        Path file = tmp.resolve("idmap.cmap");
        int n = 150_000; // well past what 1,024 declared entries could ever hold without moving
        IdMap map = new IdMap(file, 1024);
        for (int i = 0; i < n; i++) {
            map.put(key(i), i);
        }
        assertEquals(n, map.size());
        for (int i = 0; i < n; i += 7) {
            assertEquals(i, map.get(key(i)));
        }
        map.close();
        try (var left = Files.newDirectoryStream(tmp, "idmap.cmap.grow*")) {
            assertFalse(left.iterator().hasNext(), "no temporary file left behind");
        }
        IdMap again = new IdMap(file, 1024);
        assertEquals(n, again.size());
        for (int i = 3; i < n; i += 11) {
            assertEquals(i, again.get(key(i)));
        }
        assertEquals(-1, again.get(key(n + 1)));
        again.close();
    }

    /**
     * A lookup that runs while the map is rebuilt into a fresh file (as after a forget) finds every
     * live entry: the new file is filled aside and swapped in whole.
     */
    @Test
    void lookupsDuringAFreshFileRebuildFindEveryLiveEntry() throws Exception {
        Path file = tmp.resolve("idmap.cmap");
        int n = 20_000;
        IdMap map = new IdMap(file, 1024);
        java.util.Map<KeyedHash.Hash, Integer> live = new java.util.HashMap<>();
        for (int i = 0; i < n; i++) {
            map.put(key(i), i);
            live.put(key(i), i);
        }
        java.util.concurrent.atomic.AtomicBoolean stop =
                new java.util.concurrent.atomic.AtomicBoolean();
        java.util.concurrent.atomic.AtomicLong misses =
                new java.util.concurrent.atomic.AtomicLong();
        java.util.concurrent.atomic.AtomicLong lookups =
                new java.util.concurrent.atomic.AtomicLong();
        Thread reader =
                new Thread(
                        () -> {
                            int i = 0;
                            while (!stop.get()) {
                                if (map.get(key(i)) != i) {
                                    misses.incrementAndGet();
                                }
                                lookups.incrementAndGet();
                                i = (i + 7919) % n;
                            }
                        });
        reader.start();
        for (int round = 0; round < 5; round++) {
            map.reconcile(live, true);
        }
        stop.set(true);
        reader.join();
        assertEquals(
                0,
                misses.get(),
                "lookups that missed a live entry during the rebuilds, of " + lookups.get());
        org.junit.jupiter.api.Assertions.assertTrue(lookups.get() > 0, "the reader ran");
        map.close();
        IdMap again = new IdMap(file, 1024);
        assertEquals(n, again.size());
        again.close();
    }
}
