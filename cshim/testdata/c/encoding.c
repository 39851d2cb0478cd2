/*
 * encoding.c - the direct path's encoders alone: reads a level stream's
 * records from stdin and prints the bytes written for each, one line of
 * hex per record, for TestDirectEncoding and TestDirectMPIEncoding to
 * compare with encode.Encoder's. Built with lib/direct.c and nothing else.
 *
 * Input: "B <time> <open region>" starts a bin (encode.Encoder.StartBin's
 * state, without the BIN record's bytes), then "E <time> <seq> <region>"
 * (hmb_put_enter), "L <time> <seq>" (hmb_put_leave), and the forms of an
 * MPI call's direct probe (lib/direct_mpi.h): "N <time> <seq> <region>"
 * (hmb_put_enter_mpi), "P <time> <seq> <region>" (hmb_put_enter_pred),
 * "S <time> <seq>"
 * (hmb_put_leave_seq), "M <recv> <time> <seq> <peer> <tag> <bytes>
 * <comm>" (hmb_put_message_inline) and "Q <kind> <time> <seq> <peer> <tag>
 * <bytes> <comm> <request>" (hmb_put_req_inline; kind is encode.Kind's).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "direct_mpi.h"

int main(void)
{
	static uint8_t bin[64];
	struct hmb_go_level lv;
	memset(&lv, 0, sizeof lv);
	char kind;
	while (scanf(" %c", &kind) == 1) {
		uint64_t t, peer, bytes;
		uint32_t seq = 0, region = 0, tag, comm;
		int recv, n = 0;
		switch (kind) {
		case 'B':
			if (scanf("%" SCNu64 " %" SCNu32, &t, &region) != 2) {
				return 2;
			}
			memset(&lv, 0, sizeof lv);
			lv.time = t;
			lv.pred[0] = region;
			continue;
		case 'E':
			if (scanf("%" SCNu64 " %" SCNu32 " %" SCNu32, &t, &seq, &region) != 3) {
				return 2;
			}
			n = hmb_put_enter(&lv, bin, t, seq, region);
			break;
		case 'N':
		case 'P':
			if (scanf("%" SCNu64 " %" SCNu32 " %" SCNu32, &t, &seq, &region) != 3) {
				return 2;
			}
			n = kind == 'N' ? hmb_put_enter_mpi(&lv, bin, t, seq, region)
					: hmb_put_enter_pred(&lv, bin, t, seq, region);
			break;
		case 'L':
			if (scanf("%" SCNu64 " %" SCNu32, &t, &seq) != 2) {
				return 2;
			}
			n = hmb_put_leave(&lv, bin, t, seq);
			break;
		case 'S':
			if (scanf("%" SCNu64 " %" SCNu32, &t, &seq) != 2) {
				return 2;
			}
			n = hmb_put_leave_seq(&lv, bin, t, seq);
			break;
		case 'M':
			if (scanf("%d %" SCNu64 " %" SCNu32 " %" SCNu64 " %" SCNu32 " %" SCNu64 " %" SCNu32, &recv, &t, &seq,
				  &peer, &tag, &bytes, &comm) != 7) {
				return 2;
			}
			n = hmb_put_message_inline(&lv, bin, recv, t, seq, peer, tag, bytes, comm);
			break;
		case 'Q': {
			struct hmb_mpi_req r = {0};
			if (scanf("%u %" SCNu64 " %" SCNu32 " %d %" SCNu32 " %" SCNu64 " %" SCNu32 " %" SCNu64,
				  &r.kind, &t, &seq, &r.peer, &r.tag, &r.bytes, &r.comm, &r.request) != 8) {
				return 2;
			}
			n = hmb_put_req_inline(&lv, bin, t, seq, &r);
			break;
		}
		default:
			return 2;
		}
		for (int i = 0; i < n; i++) {
			printf("%02x", bin[i]);
		}
		printf("\n");
	}
	return 0;
}
