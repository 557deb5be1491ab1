import java.util.List;

/**
 * Emits {@code PanamaInt8}: the exact int8 dot products, one row or four rows at a time, with the
 * codes in an array or a segment. The arithmetic is PanamaInt8's class comment; every vector
 * operation stays inline in the loops, because a widening moved into a helper method made C2 stop
 * inlining now and then and box the vectors.
 */
final class Int8Kernels {

    private static final String[] ROWS = {"0", "1", "2", "3"};

    private Int8Kernels() {}

    static String source() {
        Src src = new Src();
        KernelSources.header(
                src,
                "PanamaInt8",
                List.of(
                        "java.lang.foreign.MemorySegment",
                        "java.lang.foreign.ValueLayout",
                        "java.nio.ByteOrder",
                        "jdk.incubator.vector.ByteVector",
                        "jdk.incubator.vector.IntVector",
                        "jdk.incubator.vector.ShortVector",
                        "jdk.incubator.vector.VectorOperators",
                        "jdk.incubator.vector.VectorShape",
                        "jdk.incubator.vector.VectorSpecies"));
        src.doc(
                "The int8 kernels of {@link PanamaKernels}. Generated from store-core/src/codegen"
                        + " (Int8Kernels).",
                "",
                "<p>Multiplying in 16-bit lanes, adding two products per lane. A byte product"
                        + " lies in [-16256, 16384],",
                "so it is exact in a short ({@code vpmullw}, one cheap instruction for a"
                        + " preferred vector's worth of",
                "shorts, where an int multiply {@code vpmulld} is two slow ones for half as many"
                        + " lanes). The sum of two",
                "products lies in [-32512, 32768]: one value too wide for a short, so each pair"
                        + " sum gets a bias of 32512",
                "in the same short add, which maps it onto [0, 65280], exact as an unsigned"
                        + " short; it is then",
                "zero-extended to ints and added, and the bias is taken back once at the end, a"
                        + " constant fixed by the",
                "length. Everything wraps modulo 2^32 like the scalar twin, and any addition"
                        + " order gives the same int,",
                "so {@code reduceLanes} may be used. Below 256-bit vectors (NEON) the scalar loop"
                        + " runs.",
                "",
                "<p>Why four rows at a time in {@code dotBulk}: a graph search scores codes"
                        + " scattered over a large",
                "array, so a score waits mostly on memory. Four rows in one loop, sharing each"
                        + " load of the query, keep",
                "four rows' cache misses in flight where one row per call keeps about two.");
        src.open("final class PanamaInt8");
        src.line("");
        src.line("private static final VectorSpecies<Integer> I = IntVector.SPECIES_PREFERRED;");
        src.line("private static final boolean VECTORIZED = I.vectorBitSize() >= 256;");
        src.line("");
        src.doc(
                "Shorts filling a preferred vector, and the bytes that widen to them (half as"
                        + " wide).");
        src.line(
                "private static final VectorSpecies<Short> S = VectorSpecies.of(short.class,"
                        + " VectorShape.forBitSize(I.vectorBitSize()));");
        src.line("");
        src.line(
                "private static final VectorSpecies<Byte> B = VectorSpecies.of(byte.class,"
                        + " VectorShape.forBitSize(Math.max(64, I.vectorBitSize() / 2)));");
        src.line("private static final int HALF = S.length();");
        src.line("");
        src.doc("Bytes per step: two products per short lane.");
        src.line("private static final int STEP = 2 * HALF;");
        src.line("");
        src.doc("Added to every pair sum (see the class comment), taken back as {@link #bias}.");
        src.line("private static final short BIAS = 32_512;");
        src.line("");
        src.line("private static final ByteOrder NATIVE = ByteOrder.nativeOrder();");
        src.line("");
        src.line("private PanamaInt8() {}");
        src.line("");
        src.doc(
                "The bias the vector loop adds over {@code [0, end)}: one per short lane per"
                        + " step.");
        src.open("private static int bias(int end)");
        src.line("return (end / STEP) * HALF * BIAS;");
        src.close();
        for (Storage s : Storage.values()) {
            src.line("");
            dot(src, s);
            src.line("");
            tail(src, s);
            src.line("");
            bulk(src, s);
            src.line("");
            four(src, s);
        }
        src.close();
        return src.text();
    }

    private static void dot(Src src, Storage s) {
        src.doc("The dot product of {@code a} and {@code b} over {@code len} bytes.");
        src.open(
                "static int dot(byte[] a, int aOff, %s b, %s bOff, int len)", s.bytes(), s.index());
        src.open("if (!VECTORIZED || len < STEP)");
        src.line("return tail(a, aOff, b, bOff, 0, len);");
        src.close();
        src.line("int end = len - len %% STEP;".replace("%%", "%"));
        src.line("IntVector acc = IntVector.zero(I);");
        src.open("for (int i = 0; i < end; i += STEP)");
        query(src);
        products(src, s, "b", "bOff", "");
        accumulate(src, "acc", "p");
        src.close();
        src.line(
                "return acc.reduceLanes(VectorOperators.ADD) - bias(end) + tail(a, aOff, b, bOff,"
                        + " end, len);");
        src.close();
    }

    private static void tail(Src src, Storage s) {
        src.doc("The products of {@code [from, len)}, one by one.");
        src.open(
                "private static int tail(byte[] a, int aOff, %s b, %s bOff, int from, int len)",
                s.bytes(), s.index());
        src.line("int sum = 0;");
        src.open("for (int i = from; i < len; i++)");
        src.line("sum += a[aOff + i] * %s;", s.byteAt("b", "bOff + i"));
        src.close();
        src.line("return sum;");
        src.close();
    }

    private static void bulk(Src src, Storage s) {
        src.doc(
                "The dot products of {@code a} and rows {@code rows[0, count)}, row r at {@code"
                        + " codesOff + r * stride}.");
        src.open(
                "static void dotBulk(byte[] a, int aOff, %s codes, %s codesOff, %s stride, int[]"
                        + " rows, int count, int len, int[] out)",
                s.bytes(), s.index(), s.index());
        src.open("if (!VECTORIZED || len < STEP)");
        src.open("for (int r = 0; r < count; r++)");
        src.line("out[r] = tail(a, aOff, codes, codesOff + rows[r] * stride, 0, len);");
        src.close();
        src.line("return;");
        src.close();
        src.line("int end = len - len %% STEP;".replace("%%", "%"));
        src.line("int bias = bias(end);");
        src.open("for (int r = 0; r < count; r += 4)");
        src.line(
                "// The last group of one to three rows repeats its last row: the loads are in"
                        + " cache");
        src.line("// by then, and the slower one-row loop is not needed.");
        src.line("int valid = Math.min(4, count - r);");
        src.line("%s o0 = codesOff + rows[r] * stride;", s.index());
        src.line("%s o1 = codesOff + rows[r + Math.min(1, valid - 1)] * stride;", s.index());
        src.line("%s o2 = codesOff + rows[r + Math.min(2, valid - 1)] * stride;", s.index());
        src.line("%s o3 = codesOff + rows[r + valid - 1] * stride;", s.index());
        src.line("dotFour(a, aOff, codes, o0, o1, o2, o3, end, out, r, valid);");
        src.line("out[r] += tail(a, aOff, codes, o0, end, len) - bias;");
        for (int j = 1; j < 4; j++) {
            src.open("if (valid > %d)", j);
            src.line("out[r + %d] += tail(a, aOff, codes, o%d, end, len) - bias;", j, j);
            src.close();
        }
        src.close();
        src.close();
    }

    private static void four(Src src, Storage s) {
        src.doc(
                "Four rows over {@code [0, end)}, {@code end} a multiple of {@code STEP}: one query"
                    + " load per step, four accumulators; the first {@code valid} biased sums go to"
                    + " {@code out[r, r + valid)}.");
        src.open(
                "private static void dotFour(byte[] a, int aOff, %s c, %s o0, %s o1, %s o2, %s o3,"
                        + " int end, int[] out, int r, int valid)",
                s.bytes(), s.index(), s.index(), s.index(), s.index());
        for (String j : ROWS) {
            src.line("IntVector acc%s = IntVector.zero(I);", j);
        }
        src.open("for (int i = 0; i < end; i += STEP)");
        query(src);
        for (String j : ROWS) {
            products(src, s, "c", "o" + j, j);
        }
        for (String j : ROWS) {
            accumulate(src, "acc" + j, "p" + j);
        }
        src.close();
        src.line("out[r] = acc0.reduceLanes(VectorOperators.ADD);");
        for (int j = 1; j < 4; j++) {
            src.open("if (valid > %d)", j);
            src.line("out[r + %d] = acc%d.reduceLanes(VectorOperators.ADD);", j, j);
            src.close();
        }
        src.close();
    }

    /** The query's two halves of a step, widened: {@code x0} and {@code x1}. */
    private static void query(Src src) {
        src.line("ShortVector x0 = %s;", widen(Storage.ARRAY.byteVector("a", "aOff + i")));
        src.line("ShortVector x1 = %s;", widen(Storage.ARRAY.byteVector("a", "aOff + i + HALF")));
    }

    /** A row's two halves, widened, and the biased pair sums {@code p<suffix>}. */
    private static void products(Src src, Storage s, String ref, String off, String suffix) {
        String y = "y" + suffix;
        src.line("ShortVector %s0 = %s;", y, widen(s.byteVector(ref, off + " + i")));
        src.line("ShortVector %s1 = %s;", y, widen(s.byteVector(ref, off + " + i + HALF")));
        src.line("ShortVector p%s = x0.mul(%s0).add(x1.mul(%s1)).add(BIAS);", suffix, y, y);
    }

    /** Adds the pair sums, zero-extended to ints, into {@code acc}. */
    private static void accumulate(Src src, String acc, String p) {
        src.line(
                "%s = %s.add(%s.convertShape(VectorOperators.ZERO_EXTEND_S2I, I, 0))"
                        + ".add(%s.convertShape(VectorOperators.ZERO_EXTEND_S2I, I, 1));",
                acc, acc, p, p);
    }

    private static String widen(String bytes) {
        return "(ShortVector) " + bytes + ".convertShape(VectorOperators.B2S, S, 0)";
    }
}
