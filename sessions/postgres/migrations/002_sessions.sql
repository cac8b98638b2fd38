-- Reserved: the tables of this part of the store come with its implementation.
SELECT 1;
