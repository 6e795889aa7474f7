/*
 * Status codes of cuvil's generated entry points (cuvil_<model>_init/run)
 * and of the runtime's weight-blob check. Generated model headers define
 * the same values, so a firmware needs only the model header.
 *
 * A weight blob (.cuvw, schema/weights.fbs) is refused, in this order of
 * checks, as: not a blob (IDENT); malformed (FORMAT); of another schema
 * version, e.g. written by an older cuvilc (VERSION); built for another
 * structure: another model, target, shapes, layout or packing (STRUCTURE);
 * misaligned (ALIGN); too small (SHORT before reading it, SIZE after);
 * corrupted: CRC-32 (CHECKSUM, every check) or SHA-256 (DIGEST, when asked
 * for); with a key (init_signed, switch_weights_signed), not signed with it
 * (SIGNATURE). Other weights of the same structure are accepted.
 */
#ifndef CUVIL_STATUS_H
#define CUVIL_STATUS_H

#ifndef CUVIL_STATUS_CODES_DEFINED
#define CUVIL_STATUS_CODES_DEFINED
#define CUVIL_OK 0
#define CUVIL_ERR_NULL (-1)          /* a required pointer is NULL */
#define CUVIL_ERR_ARENA_ALIGN (-2)   /* caller's arena is misaligned */
#define CUVIL_ERR_NO_WEIGHTS (-3)    /* external weights, none given */
#define CUVIL_ERR_NOT_INIT (-4)      /* run before a successful init */
#define CUVIL_ERR_ARENA_OVERLAP (-5) /* arenas overlap each other or blob */
#define CUVIL_ERR_ARENA_RANGE (-6)   /* arena runs past the address space */
#define CUVIL_ERR_BOUNDS (-7)        /* --checked: kernel wrote out of bounds */
#define CUVIL_ERR_DIM_RANGE (-8)     /* a bounded dimension outside its range */
#define CUVIL_ERR_INDEX (-9)         /* no input or output of that number */
#define CUVIL_ERR_BLOB_IDENT (-10)   /* not a cuvil weight blob (CUVW) */
#define CUVIL_ERR_BLOB_FORMAT (-11)  /* malformed: offsets out of bounds */
#define CUVIL_ERR_BLOB_VERSION (-12) /* unsupported schema version */
#define CUVIL_ERR_BLOB_STRUCTURE (-13) /* built for another structure */
#define CUVIL_ERR_BLOB_ALIGN (-14)     /* blob or its data block misaligned */
#define CUVIL_ERR_BLOB_SIZE (-15)      /* data smaller than the code needs */
#define CUVIL_ERR_BLOB_CHECKSUM (-16)  /* data corrupted: CRC-32 differs */
#define CUVIL_ERR_BLOB_SHORT (-17)     /* weights_size below the weights */
#define CUVIL_ERR_BLOB_DIGEST (-18)    /* data corrupted: SHA-256 differs */
#define CUVIL_ERR_LOOP_BOUND (-19)     /* a loop ran past its --loop-bound */
#define CUVIL_ERR_BLOB_SIGNATURE (-20) /* not signed with the given key */
#endif

#endif /* CUVIL_STATUS_H */
