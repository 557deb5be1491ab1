package dev.nepenthe.cluster.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** A replica's copies for others, served in chunks: whole, once, and gone when sent. */
final class CopySessionsTest {

    private static byte[] image(int n, long seed) {
        byte[] b = new byte[n];
        new SplittableRandom(seed).nextBytes(b);
        return b;
    }

    /** Reads a session to its end, as {@link CopyFetch} does. */
    private static byte[] fetch(CopySessions s, long id) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        long total = -1;
        long offset = 0;
        while (total < 0 || offset < total) {
            ByteBuffer b = ByteBuffer.wrap(s.answer(CopySessions.query(id, offset)));
            long length = b.getLong();
            assertThat(total < 0 || length == total).isTrue();
            total = length;
            out.write(b.array(), b.position(), b.remaining());
            offset += b.remaining();
            if (total == 0) {
                break;
            }
        }
        return out.toByteArray();
    }

    @Test
    void aCopyLargerThanAChunkArrivesWholeAndIsTakenOnce() throws Exception {
        byte[] expected = image(CopySessions.CHUNK * 2 + 12345, 7);
        AtomicInteger taken = new AtomicInteger();
        CopySessions s =
                new CopySessions(
                        out -> {
                            taken.incrementAndGet();
                            out.write(expected);
                        });
        assertThat(fetch(s, 42)).isEqualTo(expected);
        assertThat(taken).hasValue(1);
        // Sent to its end, the session is gone: a later chunk is refused, a new one is a new copy.
        assertThatThrownBy(() -> s.answer(CopySessions.query(42, 5)))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("expected a session that exists");
        assertThat(fetch(s, 42)).isEqualTo(expected);
        assertThat(taken).hasValue(2);
    }

    @Test
    void aFirstCallAskedAgainWhileTheCopyIsTakenWaitsForTheSameCopy() throws Exception {
        // Longer than a chunk: the first chunk leaves the session open for the rest.
        byte[] expected = image(CopySessions.CHUNK + 1000, 11);
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        AtomicInteger taken = new AtomicInteger();
        CopySessions s =
                new CopySessions(
                        out -> {
                            taken.incrementAndGet();
                            entered.countDown();
                            try {
                                release.await(10, TimeUnit.SECONDS);
                            } catch (InterruptedException e) {
                                Thread.currentThread().interrupt();
                            }
                            out.write(expected);
                        });
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            Future<byte[]> first = pool.submit(() -> s.answer(CopySessions.query(9, 0)));
            assertThat(entered.await(10, TimeUnit.SECONDS)).isTrue();
            Future<byte[]> retry = pool.submit(() -> s.answer(CopySessions.query(9, 0)));
            Thread.sleep(100);
            release.countDown();
            byte[] a = first.get(10, TimeUnit.SECONDS);
            byte[] b = retry.get(10, TimeUnit.SECONDS);
            assertThat(a).isEqualTo(b);
            assertThat(Arrays.copyOfRange(a, 8, a.length))
                    .isEqualTo(Arrays.copyOf(expected, CopySessions.CHUNK));
            assertThat(taken).hasValue(1);
            // The rest, then nothing more: the copy was sent whole.
            byte[] rest = s.answer(CopySessions.query(9, CopySessions.CHUNK));
            assertThat(Arrays.copyOfRange(rest, 8, rest.length))
                    .isEqualTo(Arrays.copyOfRange(expected, CopySessions.CHUNK, expected.length));
            assertThatThrownBy(() -> s.answer(CopySessions.query(9, CopySessions.CHUNK)))
                    .isInstanceOf(IOException.class)
                    .hasMessageContaining("expected a session that exists");
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void badQueriesAndTooManyCopiesAreRefusedWithWhatWasExpected() throws Exception {
        List<byte[]> handed = new ArrayList<>();
        CopySessions s =
                new CopySessions(
                        out -> {
                            byte[] b = image(CopySessions.CHUNK + 1, handed.size());
                            handed.add(b);
                            out.write(b);
                        });
        assertThatThrownBy(() -> s.answer(new byte[] {'C', 1, 2}))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("expected 17 bytes");
        assertThatThrownBy(() -> s.answer(CopySessions.query(1, 100)))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("start again from offset 0");
        // Two copies in flight (each with a chunk still to send): a third waits its turn.
        s.answer(CopySessions.query(1, 0));
        s.answer(CopySessions.query(2, 0));
        assertThatThrownBy(() -> s.answer(CopySessions.query(3, 0)))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("copies in flight");
        assertThatThrownBy(() -> s.answer(CopySessions.query(1, CopySessions.CHUNK + 2L)))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("expected an offset of 0 to");
        s.close();
        assertThatThrownBy(() -> s.answer(CopySessions.query(1, 1)))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("expected a session that exists");
    }

    @Test
    void aCopyThatFailsIsNotKeptAndTheNextTryTakesAnother() throws Exception {
        AtomicInteger tries = new AtomicInteger();
        byte[] expected = image(300, 3);
        CopySessions s =
                new CopySessions(
                        out -> {
                            if (tries.incrementAndGet() == 1) {
                                out.write(expected, 0, 100);
                                throw new IOException("the store closed");
                            }
                            out.write(expected);
                        });
        assertThatThrownBy(() -> s.answer(CopySessions.query(5, 0)))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("the store closed");
        assertThat(fetch(s, 5)).isEqualTo(expected);
        assertThat(tries).hasValue(2);
    }
}
