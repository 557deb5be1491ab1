package dev.nepenthe.core.text;

import dev.nepenthe.core.embed.Embedder;
import java.util.Locale;

/**
 * A test embedder: each lower-cased word adds 1 to a bucket chosen by its hash, and the vector is
 * normalised. Texts that share words are near, texts that share none are orthogonal (up to hash
 * collisions): enough to test that the store embeds what it should, never a stand-in for meaning
 * (the tests with the real model live in store-embed).
 */
final class WordHashEmbedder implements Embedder {

    static final int DIM = 64;
    int calls;

    @Override
    public String name() {
        return "word-hash-64";
    }

    @Override
    public int dimension() {
        return DIM;
    }

    @Override
    public synchronized float[] embed(String text) {
        calls++;
        float[] v = new float[DIM];
        for (String w : text.toLowerCase(Locale.ROOT).split("[^\\p{L}\\p{N}]+")) {
            if (!w.isEmpty()) {
                v[Math.floorMod(w.hashCode() * 0x9E3779B1, DIM)] += 1;
            }
        }
        double n = 0;
        for (float x : v) {
            n += x * x;
        }
        if (n == 0) {
            v[0] = 1;
            return v;
        }
        float inv = (float) (1 / Math.sqrt(n));
        for (int i = 0; i < DIM; i++) {
            v[i] *= inv;
        }
        return v;
    }
}
