/** Amazon SES receipt rules via SNS (minimal; the SES/SNS module defines the full schema). */
import { z } from 'zod';

export const sesFields = {
  provider: z.literal('ses').describe('Amazon SES receipt rule publishing to an SNS topic (HTTPS subscription).'),
  topic_arns: z.array(z.string().min(1)).min(1).describe('SNS topic ARNs accepted (at least one).'),
  s3: z.strictObject({}).optional().describe('Fetch mail stored by an S3 receipt action. Default none.'),
};
