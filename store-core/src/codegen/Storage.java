/**
 * Where a kernel's stored operand lives: a Java array, indexed by int, or a native memory segment,
 * indexed by long. Each kernel body is written once and emitted for both; only the loads differ.
 */
enum Storage {
    ARRAY,
    SEGMENT;

    String floats() {
        return this == ARRAY ? "float[]" : "MemorySegment";
    }

    String bytes() {
        return this == ARRAY ? "byte[]" : "MemorySegment";
    }

    /** The type of an element index into the operand. */
    String index() {
        return this == ARRAY ? "int" : "long";
    }

    /** A vector of {@code species} floats from {@code ref} at float index {@code at}. */
    String floatVector(String species, String ref, String at) {
        return this == ARRAY
                ? "FloatVector.fromArray(" + species + ", " + ref + ", " + at + ")"
                : "FloatVector.fromMemorySegment("
                        + species
                        + ", "
                        + ref
                        + ", "
                        + times(at)
                        + " * Float.BYTES, NATIVE)";
    }

    /** One float of {@code ref} at float index {@code at}. */
    String floatAt(String ref, String at) {
        return this == ARRAY
                ? ref + "[" + at + "]"
                : ref + ".getAtIndex(ValueLayout.JAVA_FLOAT, " + at + ")";
    }

    /** A vector of species {@code B} bytes from {@code ref} at byte index {@code at}. */
    String byteVector(String ref, String at) {
        return this == ARRAY
                ? "ByteVector.fromArray(B, " + ref + ", " + at + ")"
                : "ByteVector.fromMemorySegment(B, " + ref + ", " + at + ", NATIVE)";
    }

    /** One byte of {@code ref} at byte index {@code at}. */
    String byteAt(String ref, String at) {
        return this == ARRAY
                ? ref + "[" + at + "]"
                : ref + ".get(ValueLayout.JAVA_BYTE, " + at + ")";
    }

    /** {@code base + k}, or {@code base} when k is 0. */
    static String plus(String base, int k) {
        return k == 0 ? base : base + " + " + k;
    }

    /** An index expression as a factor: parenthesised unless it is a single name. */
    private static String times(String at) {
        return at.matches("\\w+") ? at : "(" + at + ")";
    }
}
